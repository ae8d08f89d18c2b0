// Package mcptest holds JSON-RPC bodies for tests of /mcp: seeds that
// JSON decoders read in different ways, and a generator of more.
package mcptest

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// Bodies returns n JSON-RPC bodies for /mcp built at random
// (with a fixed seed) from the parts that parsers disagree on.
func Bodies(n int) [][]byte {
	r := rand.New(rand.NewPCG(19, 1))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	key := func(k string) string {
		switch r.IntN(24) {
		case 0:
			return strings.ToUpper(k[:1]) + k[1:]
		case 1:
			return strings.ToUpper(k)
		}
		return k
	}
	id := func() string {
		if r.IntN(3) > 0 {
			return strconv.Itoa(r.IntN(1000))
		}
		return pick("1", `"a"`, "0", "-7", "1e400", "123456789012345678901234567890", `"`+strings.Repeat("i", r.IntN(300))+`"`, "null", "[1]", "{}", "1.5")
	}
	args := func() string {
		d := r.IntN(40)
		return pick(`{}`, `null`, `[1]`, `"x"`, `{"store":"apple"}`, `{"store":"chrome","id":"missing"}`,
			`{"a":`+strings.Repeat("[", d)+strings.Repeat("]", d)+`}`, `{"q":"ab","limit":5}`, `{"limit":1e9}`)
	}
	message := func() string {
		var fields []string
		fields = append(fields, `"`+key("jsonrpc")+`":"2.0"`)
		if r.IntN(12) > 0 {
			fields = append(fields, `"`+key("id")+`":`+id())
		}
		method := "tools/call"
		if r.IntN(4) == 0 {
			method = pick("tools/list", "ping", "notifications/initialized", "Tools/Call")
		}
		fields = append(fields, `"`+key("method")+`":"`+method+`"`)
		if r.IntN(6) == 0 {
			fields = append(fields, `"method":"`+pick("tools/call", "tools/list")+`"`)
		}
		name := pick("list_tags", "store_stats", "get_listing", "search_listings", "nope", "LIST_TAGS")
		params := `{"` + key("name") + `":"` + name + `"`
		if r.IntN(4) > 0 {
			params += `,"` + key("arguments") + `":` + args()
		}
		if r.IntN(8) == 0 {
			params += `,"name":"` + pick("list_tags", "store_stats") + `"`
		}
		params += "}"
		fields = append(fields, `"`+key("params")+`":`+params)
		r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
		return "{" + strings.Join(fields, ",") + "}"
	}
	out := make([][]byte, 0, n)
	for range n {
		var b string
		if r.IntN(3) == 0 {
			k := 1 + r.IntN(6)
			if r.IntN(8) == 0 {
				k = 1 + r.IntN(40)
			}
			parts := make([]string, k)
			for i := range parts {
				parts[i] = message()
			}
			b = "[" + strings.Join(parts, ",") + "]"
		} else {
			b = message()
		}
		switch r.IntN(6) {
		case 0:
			b += pick(" junk", "{}", "]", "\n"+message(), " 1", strconv.Itoa(r.IntN(10)))
		case 1:
			b = " \n\t" + b + "\r\n"
		}
		out = append(out, []byte(b))
	}
	return out
}

// Body is a request body to /mcp and its protocol version.
type Body struct{ Body, Version string }

// Seeds are bodies to /mcp that older gates counted otherwise than the SDK
// ran them: batches, trailing bytes, keys in other cases, duplicate keys,
// huge ids and deep arguments; Version is the
// Mcp-Protocol-Version header, "" for none.
var Seeds = []Body{
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tags","arguments":{}}}`, ""},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tags","arguments":{}}} {"x":1}`, ""},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tags"}}junk`, "2025-06-18"},
	{`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tags"}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"store_stats","arguments":{"store":"apple"}}}]`, ""},
	{`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tags"}}]`, "2025-03-26"},
	{`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tags"}}]`, "2025-06-18"},
	{`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tags"}}]`, "2025-11-25"},
	{`{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"name":"list_tags"}}`, ""},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","Params":{"name":"list_tags"}}`, ""},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"list_tags"}}`, ""},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"list_tags"}}`, ""},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/list","params":{"name":"list_tags"}}`, ""},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"store_stats","name":"list_tags"}}`, ""},
	{`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/call","params":{"name":"list_tags"}}`, ""},
	{`{"jsonrpc":"2.0","id":1e400,"method":"tools/call","params":{"name":"list_tags"}}`, ""},
	{`{"jsonrpc":"2.0","id":"` + strings.Repeat("x", 5000) + `","method":"tools/call","params":{"name":"list_tags"}}`, ""},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_listing","arguments":{"store":"chrome","id":"missing"}}}`, ""},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tags","arguments":{"a":` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `}}}`, ""},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_listings","arguments":{"q":{"nested":[1,{"x":null}]}}}}`, ""},
	{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"list_tags"}}`, ""},
	{`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"list_tags"}}`, ""},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`, ""},
	{"\ufeff" + `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tags"}}`, ""},
}
