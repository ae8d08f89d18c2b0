package account

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/edge-stats/edge/edge/keys"
)

// FuzzBasicCredentials: no Authorization header makes the sign-in's
// parser panic; what it accepts is bounded (no password longer than any
// account's can reach the hashing), and credentials encoded as a client
// does are read back unchanged.
func FuzzBasicCredentials(f *testing.F) {
	for _, s := range [][2]string{{"ana@example.com", "correct horse battery"}, {"A@B.C ", "pa:ss:word"}, {"", ""},
		{"ünï@example.com", "\x00\xff"}, {strings.Repeat("a", 300), "x"}, {"x@y.z", strings.Repeat("p", 2000)}} {
		f.Add("Basic "+base64.StdEncoding.EncodeToString([]byte(s[0]+":"+s[1])), s[0], s[1])
	}
	f.Add("basic   YTpi  ", "a", "b")
	f.Add("Bearer abc", "", "")
	f.Add("Basic !!!", "", "")
	f.Fuzz(func(t *testing.T, header, email, password string) {
		if e, p, ok := basicCredentials(header); ok && (len(e) > 254 || len(p) > 4*keys.MaxPassword || e != strings.ToLower(strings.TrimSpace(e))) {
			t.Fatalf("%q: accepted %q / %d-byte password", header, e, len(p))
		}
		if strings.Contains(email, ":") {
			return // a user name may not hold a colon (RFC 7617)
		}
		e, p, ok := basicCredentials("Basic " + base64.StdEncoding.EncodeToString([]byte(email+":"+password)))
		want := strings.ToLower(strings.TrimSpace(email))
		fits := len(want) <= 254 && len(password) <= 4*keys.MaxPassword && len(email)+1+len(password) <= maxCredentials
		if ok != fits || ok && (e != want || p != password) {
			t.Fatalf("%q:%q read back as %q:%q (%v)", email, password, e, p, ok)
		}
	})
}

// FuzzSignUpBody: no body makes the sign-up's reading panic, and a body
// accepted holds an address in its stored form (normalizing it again
// changes nothing) and a password within its bounds.
func FuzzSignUpBody(f *testing.F) {
	for _, b := range []string{`{"email":"Ana@Example.com","password":"correct horse battery"}`, `{"email":"a@b","password":"x"}`,
		`{"email":"\"q\"@example.com","password":"0123456789"}`, `{"email":"Ana <ana@example.com>","password":"0123456789"}`,
		`{"EMAIL":"x@y.zz","Password":"0123456789","email":"z@y.zz"}`, `[]`, `null`, `{"email":1}`} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in accountCredentials
		if json.Unmarshal(body, &in) != nil {
			return
		}
		email, err := keys.NormalizeEmail(in.Email)
		if err != nil {
			return
		}
		if again, err := keys.NormalizeEmail(email); err != nil || again != email || len(email) > 254 || strings.ContainsAny(email, " <>") {
			t.Fatalf("%q: stored as %q, normalized again %q (%v)", in.Email, email, again, err)
		}
		if n := utf8.RuneCountInString(in.Password); keys.CheckPasswordRules(in.Password) == nil && (n < keys.MinPassword || n > keys.MaxPassword) {
			t.Fatalf("a %d-character password accepted", n)
		}
	})
}
