// Command fleetnet forwards TCP connections from addresses of a bench's
// own network (a bridge between network namespaces that
// bench/fleetnet.sh makes) to servers listening on loopback only (the
// bench's ClickHouse and ZooKeeper), so that edges in namespaces of
// their own reach them while the states cross links of a real speed.
// Each pair is a faultproxy, carrying every byte as it comes.
//
//	fleetnet 10.77.0.1:19000=127.0.0.1:19000 10.77.0.1:12181=127.0.0.1:12181
//
// It runs until killed.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/edge-stats/edge/analytics/chtest/faultproxy"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: fleetnet LISTEN=TARGET...")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, pair := range os.Args[1:] {
		from, to, ok := strings.Cut(pair, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "fleetnet: %q is not LISTEN=TARGET\n", pair)
			os.Exit(2)
		}
		p, err := faultproxy.StartOn(from, to)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fleetnet: %s: %v\n", pair, err)
			os.Exit(1)
		}
		defer p.Close()
	}
	<-ctx.Done()
}
