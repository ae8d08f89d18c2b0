package egress

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeResolver answers names from a map, each lookup taking the next of
// its answers (the last repeats): a name that rebinds.
type fakeResolver struct {
	answers map[string][]string
	asked   map[string]int
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	as, ok := r.answers[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	i := min(r.asked[host], len(as)-1)
	r.asked[host]++
	return []netip.Addr{netip.MustParseAddr(as[i])}, nil
}

var loopback = []Rule{{Prefix: netip.MustParsePrefix("127.0.0.0/8")}, {Prefix: netip.MustParsePrefix("::1/128")}}

// TestCheckURLRefuses refuses each kind of URL a caller could reach the
// edge's own network with, and admits a public https URL.
func TestCheckURLRefuses(t *testing.T) {
	res := &fakeResolver{answers: map[string][]string{
		"hooks.example.com": {"93.184.216.34"}, "inside.example.com": {"10.1.2.3"}, "localhost": {"127.0.0.1"},
		"meta.example.com": {"169.254.169.254"}, "v6.example.com": {"2606:4700::1111"}, "ula.example.com": {"fd00:ec2::254"},
	}, asked: map[string]int{}}
	p := &Policy{Resolver: res}
	for raw, want := range map[string]string{
		"http://hooks.example.com/x":               "use https",
		"ftp://hooks.example.com/x":                "use an https URL",
		"file:///etc/passwd":                       "use an https URL",
		"":                                         "give the URL deliveries are sent to",
		"  ":                                       "give the URL deliveries are sent to",
		"hooks.example.com/x":                      "use an https URL, such as https://",
		"https://user:pw@hooks.example.com/x":      "no user name or password",
		"https://127.0.0.1/x":                      "loopback",
		"https://127.1.2.3:8443/x":                 "loopback",
		"https://[::1]/x":                          "loopback",
		"https://[::ffff:127.0.0.1]/x":             "loopback",
		"https://localhost/x":                      "loopback",
		"https://10.0.0.5/x":                       "private",
		"https://192.168.1.1/x":                    "private",
		"https://172.16.0.1/x":                     "private",
		"https://inside.example.com/x":             "private",
		"https://[fd00::1]/x":                      "private",
		"https://ula.example.com/":                 "private",
		"https://169.254.169.254/latest/meta-data": "link-local",
		"https://meta.example.com/":                "link-local",
		"https://[fe80::1]/x":                      "link-local",
		"https://0.0.0.0/x":                        "unspecified",
		"https://100.64.0.1/x":                     "reserved",
		"https://224.0.0.1/x":                      "multicast",
		"https://nowhere.example.com/x":            "does not resolve",
		"https://hooks.example.com:0/x":            "a port from 1",
		"https:///x":                               "a URL with a host",
		"https://" + strings.Repeat("a", 2100):     "at most 2,048 bytes",
		// A zone hid an address from every range (fourth review).
		"https://[64:ff9b::7f00:1%251]/": "no zone",
		"https://[2002:7f00:1::%251]/":   "no zone",
		"https://[2001:db8::1%251]/":     "no zone",
		"https://[100::1%251]/":          "no zone",
		"https://[fe80::1%25eth0]/":      "no zone",
		"https://[64:ff9b::7f00:1]/":     "reserved",
		"https://[::7f00:1]/":            "reserved (::/96)",
		"https://[::a00:1]/":             "reserved (::/96)",
		"https://[::ffff:0:a00:1]/":      "reserved (::ffff:0:0:0/96)",
		"https://[fec0::1]/":             "reserved (fec0::/10)",
		"https://[2001:0:4136:e378::1]/": "reserved (2001::/32)",
	} {
		_, err := p.CheckURL(context.Background(), raw)
		if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), want) {
			t.Errorf("%.60s: %v, want a refusal saying %q", raw, err, want)
		}
	}
	for _, raw := range []string{"https://hooks.example.com/edge?a=1", "https://v6.example.com:8443/x", "https://93.184.216.34/"} {
		if _, err := p.CheckURL(context.Background(), raw); err != nil {
			t.Errorf("%s: %v", raw, err)
		}
	}
	allowing := &Policy{Allow: loopback, AllowHTTP: true}
	if _, err := allowing.CheckURL(context.Background(), "http://127.0.0.1:9/x"); err != nil {
		t.Errorf("loopback allowed by the operator: %v", err)
	}
}

// TestZonesAreStripped: an address with a zone is judged as the address,
// at the dial's check too (a name could resolve to one).
func TestZonesAreStripped(t *testing.T) {
	p := &Policy{}
	for _, s := range []string{"64:ff9b::7f00:1%1", "2002:7f00:1::%eth0", "2001:db8::1%1", "100::1%1", "::1%lo", "::ffff:127.0.0.1%1", "fe80::1%1"} {
		if err := p.Check(netip.AddrPortFrom(netip.MustParseAddr(s), 443)); !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v, want a refusal", s, err)
		}
	}
}

// TestAllowAndDenyRules: an allowed range with a port admits that port
// alone; a denied service is refused whatever the allow list says.
func TestAllowAndDenyRules(t *testing.T) {
	allow, err := ParseRules("127.0.0.1:9999, [::1]:9999, 10.0.0.0/8:443, 192.168.1.7")
	if err != nil {
		t.Fatal(err)
	}
	deny, err := ParseRules("10.0.0.5:443")
	if err != nil {
		t.Fatal(err)
	}
	p := &Policy{Allow: allow, Deny: deny, AllowHTTP: true}
	for raw, ok := range map[string]bool{
		"http://127.0.0.1:9999/x":  true,
		"http://127.0.0.1:8123/x":  false,
		"http://127.0.0.2:9999/x":  false,
		"http://[::1]:9999/x":      true,
		"http://[::1]:9000/x":      false,
		"https://10.1.2.3/x":       true,
		"https://10.1.2.3:8443/x":  false,
		"https://10.0.0.5/x":       false, // denied whatever the allow list says
		"http://192.168.1.7:1234/": true,
		"http://192.168.1.8:1234/": false,
	} {
		_, err := p.CheckURL(context.Background(), raw)
		if (err == nil) != ok {
			t.Errorf("%s: %v, want allowed %v", raw, err, ok)
		}
	}
	for _, bad := range []string{"127.0.0.1:0", "127.0.0.1:70000", "[::1", "[::1]9", "fe80::1%1", "x", "10.0.0.0/33", "::1:", "127.0.0.1:x"} {
		if _, err := ParseRules(bad); err == nil {
			t.Errorf("%q: taken", bad)
		}
	}
	// The edge's own services on loopback are denied on every loopback
	// address and the ports given.
	own := Own(context.Background(), nil, []string{"127.0.0.1:19000", ":8080"}, 8123)
	q := &Policy{Allow: loopback, Deny: own, AllowHTTP: true}
	for raw, ok := range map[string]bool{
		"http://127.0.0.1:19000/": false, "http://127.0.0.9:8123/": false, "http://[::1]:8080/": false,
		"http://127.0.0.1:9999/": true,
	} {
		if _, err := q.CheckURL(context.Background(), raw); (err == nil) != ok {
			t.Errorf("own services: %s: %v, want allowed %v", raw, err, ok)
		}
	}
	// Any other port of those services' hosts is reached only when the
	// allow list names its address and port, not by a range that holds
	// them: the ClickHouse's HTTP interface may be on any port.
	q.Hosts = OwnHosts(context.Background(), nil, []string{"127.0.0.1:19000"})
	q.Allow = append(slices.Clone(loopback), Rule{Prefix: netip.MustParsePrefix("127.0.0.1/32"), Port: 9999})
	for raw, ok := range map[string]bool{
		"http://127.0.0.1:18123/?query=INSERT": false, "http://127.0.0.2:9999/": false, "http://[::1]:9999/": false,
		"http://127.0.0.1:9999/": true, "http://127.0.0.1:19000/": false,
	} {
		if _, err := q.CheckURL(context.Background(), raw); (err == nil) != ok {
			t.Errorf("own hosts: %s: %v, want allowed %v", raw, err, ok)
		}
	}
}

// receiver is a loopback server counting its requests.
func receiver(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if h != nil {
			h(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestClientRefusesRebinding: a name that resolved to a public address
// when it was registered and resolves to loopback at delivery is refused
// as the connection is made; the loopback server gets nothing.
func TestClientRefusesRebinding(t *testing.T) {
	srv, got := receiver(t, nil)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	res := &fakeResolver{answers: map[string][]string{"rebind.example.com": {"93.184.216.34", "127.0.0.1"}}, asked: map[string]int{}}
	p := &Policy{Resolver: res, AllowHTTP: true}
	u, err := p.CheckURL(context.Background(), "http://rebind.example.com:"+port+"/hook")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Client(2*time.Second).Post(u.String(), "application/json", strings.NewReader("{}"))
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("a delivery to a name now on loopback: %v", err)
	}
	// The same address, named directly, is refused too.
	if _, err := p.Client(2 * time.Second).Get(srv.URL); !errors.Is(err, ErrRefused) {
		t.Fatalf("a delivery to loopback: %v", err)
	}
	if got.Load() != 0 {
		t.Fatalf("the loopback server got %d requests", got.Load())
	}
}

// TestClientFollowsNoRedirect: a 302 is the answer, and where it points
// gets nothing.
func TestClientFollowsNoRedirect(t *testing.T) {
	target, hits := receiver(t, nil)
	srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/elsewhere", http.StatusFound)
	})
	p := &Policy{Allow: loopback, AllowHTTP: true}
	resp, err := p.Client(2*time.Second).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || hits.Load() != 0 {
		t.Fatalf("status %d, the redirect's target got %d requests", resp.StatusCode, hits.Load())
	}
}

// anyName resolves every name to one public address, and names starting
// with "in" to a private one.
type anyName struct{}

func (anyName) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if strings.HasPrefix(host, "in") {
		return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
}

// FuzzCheckURL: any string is refused, or is an https URL with a host,
// no user information, and a host that is a public address or a name
// that resolves to one.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://hooks.example.com/x", "https://[::ffff:10.0.0.1]/", "https://inside/", "https://0x7f.1/", "https://2130706433/",
		"https://127.0.0.1%2523@x/", "HTTPS://[fe80::1%25eth0]/", "https://[64:ff9b::7f00:1%251]/", "https://a@b@c/", "http://x/",
		"https://127.0.0.2:18123/", "https://[::ffff:127.0.0.2]:19000/", "https://0.0.0.0:8123/", "https://[::]:8123/", "https://[::ffff:7f00:2]/",
		"https://[0:0:0:0:0:ffff:a00:1]/", "https://inside.:443/", "https://LOCALHOST/", "https://x.localhost/"} {
		f.Add(s)
	}
	p := &Policy{Resolver: anyName{}}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := p.CheckURL(context.Background(), raw)
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("%q: %v, not a refusal", raw, err)
			}
			return
		}
		if u.Scheme != "https" || u.User != nil || u.Hostname() == "" || strings.Contains(u.Host, "%") {
			t.Fatalf("%q accepted as %#v", raw, u)
		}
		host := strings.Trim(u.Hostname(), "[]")
		if a, err := netip.ParseAddr(host); err == nil && Why(a) != "" {
			t.Fatalf("%q accepted with the address %s (%s)", raw, a, Why(a))
		}
		if strings.HasPrefix(host, "in") {
			t.Fatalf("%q accepted: it resolves to a private address", raw)
		}
	})
}
