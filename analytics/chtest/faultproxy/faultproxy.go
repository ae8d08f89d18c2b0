// Package faultproxy is a TCP proxy for fault-injection tests: it stands
// between the edge and ClickHouse on a loopback port and, on command,
// delays, drops, resets, blackholes, or cuts a result stream in the
// middle, for the connections it holds and those still to come.
package faultproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Fault is what the proxy does to the traffic it carries.
type Fault int

// The faults.
const (
	// None forwards every byte as it comes.
	None Fault = iota
	// Latency holds each chunk a client sends for the Delay before
	// forwarding it: every query's answer comes Delay late.
	Latency
	// Drop closes every connection and closes new ones as soon as they
	// are accepted: the server is gone.
	Drop
	// Reset aborts every connection with a TCP reset, and new ones as soon
	// as they are accepted.
	Reset
	// Blackhole accepts connections and forwards nothing in either
	// direction, ever: a server that hangs (or a paused process).
	Blackhole
	// Cut forwards CutAfter more bytes of the server's answers on each
	// connection, then aborts it with a reset: a result cut in the middle.
	Cut
)

func (f Fault) String() string {
	return [...]string{"none", "latency", "drop", "reset", "blackhole", "cut"}[f]
}

// Proxy forwards a listener's connections to a target address, under the
// fault it is set to. It is safe for concurrent use.
type Proxy struct {
	ln     net.Listener
	target string

	mu       sync.Mutex
	fault    Fault
	delay    time.Duration
	cutAfter int
	conns    map[*link]struct{}
	closed   bool
	wg       sync.WaitGroup
}

// link is one proxied connection: the client's side and the server's.
type link struct {
	client, server *net.TCPConn
	mu             sync.Mutex
	left           int // bytes of the server's still to forward under Cut (-1: not counting)
}

// Start listens on a free loopback port and forwards to target.
func Start(target string) (*Proxy, error) { return StartOn("127.0.0.1:0", target) }

// StartOn listens on addr and forwards to target (bench/fleetnet: from
// a bench's own bridge to a server on loopback).
func StartOn(addr, target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr returns the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Set sets the fault: delay is Latency's, cutAfter is Cut's bytes. Drop
// and Reset act on the connections held at once; the others from their
// next chunk.
func (p *Proxy) Set(f Fault, delay time.Duration, cutAfter int) {
	p.mu.Lock()
	p.fault, p.delay, p.cutAfter = f, delay, cutAfter
	var held []*link
	for l := range p.conns {
		held = append(held, l)
		l.mu.Lock()
		l.left = -1
		if f == Cut {
			l.left = cutAfter
		}
		l.mu.Unlock()
	}
	p.mu.Unlock()
	switch f {
	case Drop:
		for _, l := range held {
			l.close(false)
		}
	case Reset:
		for _, l := range held {
			l.close(true)
		}
	}
}

// Fault returns the fault set.
func (p *Proxy) Fault() Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fault
}

// Close stops accepting, closes every connection and waits for the
// proxy's goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	var held []*link
	for l := range p.conns {
		held = append(held, l)
	}
	p.mu.Unlock()
	err := p.ln.Close()
	for _, l := range held {
		l.close(false)
	}
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		client := c.(*net.TCPConn)
		p.mu.Lock()
		f, cut, closed := p.fault, p.cutAfter, p.closed
		p.mu.Unlock()
		switch {
		case closed || f == Drop:
			client.Close()
			continue
		case f == Reset:
			client.SetLinger(0)
			client.Close()
			continue
		}
		l := &link{client: client, left: -1}
		if f == Cut {
			l.left = cut
		}
		p.wg.Add(1)
		go p.serve(l, f == Blackhole)
	}
}

// serve dials the target for l and forwards both ways until either side
// ends. A connection accepted under Blackhole never reaches the server.
func (p *Proxy) serve(l *link, blackhole bool) {
	defer p.wg.Done()
	if blackhole {
		// Read and drop what the client sends until it gives up (or the
		// fault changes: the server is still never dialled).
		p.track(l, true)
		io.Copy(io.Discard, l.client)
		p.track(l, false)
		l.client.Close()
		return
	}
	s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		l.client.SetLinger(0)
		l.client.Close()
		return
	}
	l.server = s.(*net.TCPConn)
	p.track(l, true)
	defer p.track(l, false)
	var both sync.WaitGroup
	both.Add(2)
	go func() { defer both.Done(); p.pump(l, l.client, l.server, true) }()
	go func() { defer both.Done(); p.pump(l, l.server, l.client, false) }()
	both.Wait()
	l.close(false)
}

func (p *Proxy) track(l *link, add bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		p.conns[l] = struct{}{}
	} else {
		delete(p.conns, l)
	}
}

// pump copies from src to dst chunk by chunk, each under the fault set
// when it comes; toServer says which way it goes.
func (p *Proxy) pump(l *link, src, dst *net.TCPConn, toServer bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			f, delay := p.fault, p.delay
			p.mu.Unlock()
			chunk := buf[:n]
			switch f {
			case Blackhole:
				chunk = nil
			case Latency:
				if toServer {
					time.Sleep(delay)
				}
			case Cut:
				if !toServer {
					l.mu.Lock()
					if l.left >= 0 && len(chunk) >= l.left {
						chunk = chunk[:l.left]
						l.left = 0
						l.mu.Unlock()
						dst.Write(chunk)
						l.close(true)
						return
					}
					if l.left > 0 {
						l.left -= len(chunk)
					}
					l.mu.Unlock()
				}
			}
			if len(chunk) > 0 {
				if _, werr := dst.Write(chunk); werr != nil {
					l.close(false)
					return
				}
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				l.close(false)
				return
			}
			dst.CloseWrite()
			return
		}
	}
}

// close closes both sides of l, with a reset when abort.
func (l *link) close(abort bool) {
	for _, c := range []*net.TCPConn{l.client, l.server} {
		if c == nil {
			continue
		}
		if abort {
			c.SetLinger(0)
		}
		c.Close()
	}
}
