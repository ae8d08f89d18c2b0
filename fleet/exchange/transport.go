package exchange

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/edge-stats/edge/fleet/trust"
)

// Pins returns the pin of the certificate (trust.PinOf) of the elected
// leader whose fleet address is at hostport: "" when its node names none
// (an edge of an earlier release); elected is false when the elected
// leader is at another address or none is known.
type Pins func(hostport string) (pin string, elected bool)

// ErrNotElectedAddress says a request to the fleet's leader was about to
// go to an address that is not the elected leader's (the election moved
// on meanwhile).
var ErrNotElectedAddress = errors.New("not the elected leader's fleet address")

// Transport returns the transport of requests to the fleet's leader: TLS
// with this edge's certificate, the leader's checked against the fleet's
// authority, when keys is not nil.
func Transport(keys *trust.Keys) *http.Transport { return BoundTransport(keys, nil) }

// BoundTransport is Transport whose connections, with keys and pins, go
// only to the elected leader's address and take there only the
// certificate its election node names: an edge of the fleet (it holds
// the token, so its certificate is the fleet's) that takes over the
// elected edge's address is refused in the handshake, before a byte of a
// request is sent (trust.ErrNotElected). An elected node that names no
// pin (an earlier release's) is held to the fleet's authority alone.
func BoundTransport(keys *trust.Keys, pins Pins) *http.Transport {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{Proxy: nil, DialContext: dialer.DialContext,
		TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: 30 * time.Second, IdleConnTimeout: time.Minute,
		DisableCompression: true, MaxResponseHeaderBytes: 64 << 10}
	if keys == nil {
		return tr
	}
	tr.TLSClientConfig = keys.ClientTLS()
	if pins == nil {
		return tr
	}
	tr.DialTLSContext = func(ctx context.Context, network, hostport string) (net.Conn, error) {
		pin, elected := pins(hostport)
		if !elected {
			return nil, fmt.Errorf("dial %s: %w", hostport, ErrNotElectedAddress)
		}
		cfg := keys.ClientTLS()
		if pin != "" {
			cfg.VerifyConnection = func(cs tls.ConnectionState) error {
				// Called after the chain was verified against the fleet's
				// authority: only the key is left to check.
				if len(cs.PeerCertificates) == 0 || trust.PinOf(cs.PeerCertificates[0]) != pin {
					return trust.ErrNotElected
				}
				return nil
			}
		}
		raw, err := dialer.DialContext(ctx, network, hostport)
		if err != nil {
			return nil, err
		}
		hctx, cancel := context.WithTimeout(ctx, tr.TLSHandshakeTimeout)
		defer cancel()
		conn := tls.Client(raw, cfg)
		if err := conn.HandshakeContext(hctx); err != nil {
			raw.Close()
			return nil, fmt.Errorf("fleet leader %s: %w", hostport, err)
		}
		return conn, nil
	}
	return tr
}
