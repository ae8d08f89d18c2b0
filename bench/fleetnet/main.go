// Command fleetnet forwards TCP connections from addresses of a bench's
// own network (a bridge between network namespaces that
// bench/fleetnet.sh makes) to servers listening on loopback only (the
// bench's ClickHouse and ZooKeeper), so that edges in namespaces of
// their own reach them while the states cross links of a real speed.
//
//	fleetnet 10.77.0.1:19000=127.0.0.1:19000 10.77.0.1:12181=127.0.0.1:12181
//
// It runs until killed. Every address it listens on must be one the
// bench made; it refuses any other pair form.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
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
		ln, err := net.Listen("tcp", from)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fleetnet: listen %s: %v\n", from, err)
			os.Exit(1)
		}
		go serve(ctx, ln, to)
	}
	<-ctx.Done()
}

// serve accepts on ln and copies each connection both ways to target.
func serve(ctx context.Context, ln net.Listener, target string) {
	go func() { <-ctx.Done(); ln.Close() }()
	var d net.Dialer
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			t, err := d.DialContext(ctx, "tcp", target)
			if err != nil {
				slog.Warn("dial", "target", target, "err", err)
				return
			}
			defer t.Close()
			done := make(chan struct{}, 2)
			cp := func(dst, src net.Conn) {
				io.Copy(dst, src)
				if tc, ok := dst.(*net.TCPConn); ok {
					tc.CloseWrite()
				}
				done <- struct{}{}
			}
			go cp(t, c)
			go cp(c, t)
			<-done
			<-done
		}()
	}
}
