package access

import (
	"bytes"
	"testing"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/apikey"
	"github.com/edge-stats/edge/edge/keys"
)

// FuzzKeyHeaders: no Authorization or X-Api-Key value makes the key check
// panic; a key is read only from the Bearer scheme (any case) or from
// X-Api-Key, trimmed; and only the exact key is valid (keys.Verify on a
// registry of one key: any other string, however close, is Invalid).
func FuzzKeyHeaders(f *testing.F) {
	key, id := apikey.New()
	for _, s := range [][2]string{{"Bearer " + key, ""}, {"bearer  " + key + "  ", "x"}, {"", key}, {"Basic YTpi", key},
		{"Bearer", ""}, {"Bearer " + key[:len(key)-1] + "A", ""}, {"Bearer " + id + "_", ""}, {"BEARER\t" + key, ""}, {"", "\x00" + key}} {
		f.Add(s[0], s[1])
	}
	reg := keys.NewStaticRegistry([]analytics.AccountState{{Email: "a@example.com"}},
		[]analytics.KeyRow{{ID: id, Email: "a@example.com", Hash: apikey.Sum(key).String()}})
	f.Fuzz(func(t *testing.T, authz, xkey string) {
		k, ok := headerKey([]byte(authz), []byte(xkey))
		if !ok {
			if authz == "" {
				t.Fatal("refused without an Authorization header")
			}
			return
		}
		if authz != "" {
			if len(k) == 0 || !bytes.Contains([]byte(authz), k) {
				t.Fatalf("%q: key %q is not the header's token", authz, k)
			}
		} else if string(k) != xkey {
			t.Fatalf("X-Api-Key %q read as %q", xkey, k)
		}
		got, v := reg.Verify(string(k))
		if (v == keys.Valid) != (string(k) == key) || v == keys.Valid && got.ID != id {
			t.Fatalf("%q: verdict %v for a key that is %sthe key", k, v, map[bool]string{true: "", false: "not "}[string(k) == key])
		}
	})
}
