package memory

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestMemoryLimit(t *testing.T) {
	const gib = int64(1) << 30
	v2 := fstest.MapFS{"memory.max": {Data: []byte("8589934592\n")}}
	nested := fstest.MapFS{"system.slice/edge.service/memory.max": {Data: []byte("4294967296\n")}, "memory.max": {Data: []byte("max\n")}}
	v1 := fstest.MapFS{"memory/memory.limit_in_bytes": {Data: []byte("2147483648\n")}}
	v1Unlimited := fstest.MapFS{"memory/memory.limit_in_bytes": {Data: []byte("9223372036854771712\n")}}
	cases := []struct {
		name, flag, self string
		fs               fstest.MapFS
		cache            int64
		want             int64
		source, err      string
	}{
		{"cgroup v2 at the root", "", "0::/\n", v2, 256 << 20, 8*gib - 8*gib/10 - 256<<20, "cgroup memory.max", ""},
		{"cgroup v2 of a systemd unit", "auto", "0::/system.slice/edge.service\n", nested, 0, 4*gib - 4*gib/10, "cgroup system.slice/edge.service/memory.max", ""},
		{"cgroup v1", "", "", v1, 0, 2*gib - 2*gib/10, "cgroup memory/memory.limit_in_bytes", ""},
		{"unlimited v1", "", "", v1Unlimited, 0, 0, "none", ""},
		{"no cgroup", "", "", fstest.MapFS{}, 0, 0, "none", ""},
		{"the flag wins", "12GiB", "0::/\n", v2, 0, 12*gib - 12*gib/10, "--memory-limit", ""},
		{"bytes", "1073741824", "", nil, 0, gib - gib/10, "--memory-limit", ""},
		{"off", "off", "0::/\n", v2, 0, 0, "off", ""},
		{"a cache larger than the limit", "1GiB", "", nil, 900 << 20, 0, "", "answer cache"},
		{"a bad size", "12 parsecs", "", nil, 0, 0, "", "unit"},
		{"a negative size", "-5GiB", "", nil, 0, 0, "", "not a size"},
		{"an overflowing size", "99999999999TiB", "", nil, 0, 0, "", "too large"},
	}
	for _, c := range cases {
		fs := c.fs
		if fs == nil {
			fs = fstest.MapFS{}
		}
		got, source, err := Limit(c.flag, fs, c.self, c.cache)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %d %v, want an error saying %q", c.name, got, err, c.err)
			}
		case err != nil || got != c.want || !strings.HasPrefix(source, c.source):
			t.Errorf("%s: %d from %q (%v), want %d from %q", c.name, got, source, err, c.want, c.source)
		}
	}
}
