package main

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	robfig "github.com/robfig/cron/v3"

	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/webhooks"
	"github.com/edge-stats/edge/fleet"
	"github.com/edge-stats/edge/fleet/exchange"
)

// checkServe checks every setting of c that a later step of serve would
// refuse, naming the flag, so that a bad setting is refused before serve
// binds any address: a refusal then never hides behind "address already
// in use", and an edge that cannot run never takes a port.
func checkServe(c *serveConfig) error {
	for _, a := range []struct{ flag, addr string }{
		{"--listen", c.srv.Listen}, {"--fleet-listen", c.fleetListen}, {"--debug-listen", c.debugListen},
	} {
		if err := checkListenAddr(a.addr); err != nil {
			return fmt.Errorf("%s %q: %w", a.flag, a.addr, err)
		}
	}
	for _, s := range []struct {
		flag, spec string
		offOK      bool // "off" turns the job off
	}{
		{"--full-schedule", c.full, false}, {"--refresh-schedule", c.refresh, false}, {"--editions-schedule", c.editions, true},
		{"--ranks-schedule", c.ranks, true}, {"--usage-retention-schedule", c.retention, true}, {"--exports-schedule", c.exportsSchedule, true},
	} {
		if s.offOK && s.spec == "off" {
			continue
		}
		if _, err := robfig.ParseStandard(s.spec); err != nil {
			return fmt.Errorf("%s %q: %w (a cron spec such as \"7 * * * *\", or @every 1h)", s.flag, s.spec, err)
		}
	}
	if c.fleetListen != "" {
		if err := exchange.CheckAddress(fleet.Advertised(c.fleetAdvertise, c.fleetListen, c.fleet.Keys != nil), c.fleet.Keys); err != nil {
			return fmt.Errorf("--fleet-advertise: the other edges would not take this edge's state: %w", err)
		}
	}
	if c.zk != "" {
		if p := c.zkPath; p != "" && (!strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/")) {
			return fmt.Errorf("--zk-path %q: use an absolute ZooKeeper path without a trailing slash, such as /edge/fleets/edge", p)
		}
		if user, pass, ok := strings.Cut(c.zkAuth, ":"); c.zkAuth != "" && (!ok || user == "" || pass == "") {
			return errors.New("EDGE_ZK_AUTH: want ZooKeeper digest credentials user:password")
		}
	}
	if _, err := clientip.ParseHeader(c.srv.ClientHeader); err != nil {
		return fmt.Errorf("--client-header: %w", err)
	}
	if c.srv.IPv6Prefix < 0 || c.srv.IPv6Prefix > 128 {
		return fmt.Errorf("--ipv6-prefix %d: use 32 to 128 (a caller is its /64 by default)", c.srv.IPv6Prefix)
	}
	if c.srv.CacheMB < 1 {
		return fmt.Errorf("--cache-mb %d: give the answer cache at least 1 MiB", c.srv.CacheMB)
	}
	if c.srv.Webhooks.Key != "" {
		if err := webhooks.CheckKey(c.srv.Webhooks.Key); err != nil {
			return fmt.Errorf("EDGE_WEBHOOK_KEY: %w", err)
		}
	}
	return nil
}

// checkListenAddr reports whether addr ("" for none) is a host:port a
// listener can be asked for (the port a number, 0 for any).
func checkListenAddr(addr string) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want host:port, such as 127.0.0.1:8080: %w", err)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
		return fmt.Errorf("port %q: want a number from 0 to 65535", port)
	}
	return nil
}
