package keys

import (
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/apikey"
)

func TestPasswordHash(t *testing.T) {
	h := HashPassword("correct horse battery")
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") || strings.Contains(h, "correct") {
		t.Fatalf("hash %q", h)
	}
	if !CheckPassword("correct horse battery", h) {
		t.Fatal("the right password was refused")
	}
	if CheckPassword("correct horse batterz", h) {
		t.Fatal("a wrong password was accepted")
	}
	if h == HashPassword("correct horse battery") {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=1,t=1,p=1$AA$AA", "$argon2id$v=19$m=0,t=1,p=1$AA$AA", "plain"} {
		if CheckPassword("x", bad) {
			t.Errorf("malformed hash %q matched", bad)
		}
	}
}

func TestNormalizeEmail(t *testing.T) {
	for in, want := range map[string]string{" Ana@Example.COM ": "ana@example.com", "a.b+c@d.io": "a.b+c@d.io"} {
		if got, err := NormalizeEmail(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "ana", "Ana <ana@example.com>", "ana@localhost", "a@b@c.d", strings.Repeat("a", 250) + "@x.io"} {
		if _, err := NormalizeEmail(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestVerify(t *testing.T) {
	live, liveID := apikey.New()
	revoked, revokedID := apikey.New()
	disabled, disabledID := apikey.New()
	unknown, _ := apikey.New()
	at := time.Now()
	r := &Registry{}
	if _, v := r.Verify(live); v != Unavailable {
		t.Fatalf("before a load: %v, want Unavailable", v)
	}
	r.reset(
		[]analytics.AccountState{{Email: "a@x.io"}, {Email: "d@x.io", Disabled: true}},
		[]analytics.KeyRow{
			{ID: liveID, Email: "a@x.io", Hash: apikey.Sum(live).String(), DailyLimit: 50},
			{ID: revokedID, Email: "a@x.io", Hash: apikey.Sum(revoked).String(), Revoked: true},
			{ID: disabledID, Email: "d@x.io", Hash: apikey.Sum(disabled).String()},
		}, at)
	k, v := r.Verify(live)
	if v != Valid || k.ID != liveID || k.Email != "a@x.io" || k.DailyLimit != 50 {
		t.Fatalf("live key: %+v %v", k, v)
	}
	// Same id, other secret: the hash comparison refuses it.
	last := "a"
	if live[len(live)-1] == 'a' {
		last = "b"
	}
	forged := live[:len(live)-1] + last
	for name, key := range map[string]string{"revoked": revoked, "disabled account": disabled, "unknown": unknown,
		"forged secret": forged, "malformed": "nonsense", "empty": ""} {
		if k, v := r.Verify(key); v != Invalid || k != (Key{}) {
			t.Errorf("%s: %+v %v, want Invalid", name, k, v)
		}
	}
	if r.Len() != 1 || !r.LoadedAt().Equal(at) {
		t.Fatalf("Len %d LoadedAt %v", r.Len(), r.LoadedAt())
	}
}

func BenchmarkVerify(b *testing.B) {
	key, id := apikey.New()
	r := &Registry{}
	r.reset([]analytics.AccountState{{Email: "a@x.io"}},
		[]analytics.KeyRow{{ID: id, Email: "a@x.io", Hash: apikey.Sum(key).String()}}, time.Now())
	b.ReportAllocs()
	for b.Loop() {
		if _, v := r.Verify(key); v != Valid {
			b.Fatal(v)
		}
	}
}
