package webhooks

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"syscall"
	"time"
)

// conns is the attempts' HTTP/1.1 client: keep-alive connections per
// endpoint (scheme, host and port), each used by one attempt at a time,
// from writing its request to the end of reading its answer, in the
// attempt's own goroutine. net/http's Transport hands each request to a
// connection's writing goroutine and the answer back from its reading one:
// at the hot SKU's thousands of events a second those hand-offs were about
// half the sender's CPU per event (docs/benchmarks.md, issue 29), on a
// machine where that CPU is checkout's. The request and the answer are
// still written and parsed by net/http (Request.Write, ReadResponse).
//
// What the Transport did and this keeps: nothing follows a redirect (a 3xx
// is an answer, and not a 2xx); one deadline covers connect, TLS, request
// and answer; the dialer's Control refuses private addresses unless they
// are allowed; no proxy; HTTP/1.1 only, over TLS for https (the system's
// roots, the URL's host as server name); at most maxIdle idle connections
// per endpoint, closed after idleTimeout.
type conns struct {
	timeout time.Duration
	maxIdle int
	control func(network, address string, c syscall.RawConn) error
	tls     *tls.Config // nil: the defaults; tests trust their server's certificate here
	mu      sync.Mutex
	idle    map[string][]*hconn // by endpoint, the most recently used last
	closed  bool
}

// idleTimeout is how long an unused connection is kept (as the Transport's
// IdleConnTimeout was).
const idleTimeout = 90 * time.Second

// drainMax is how much of an answer's body is read; a longer one costs its
// connection (it is closed rather than read to the end).
const drainMax = 64 << 10

func newConns(timeout time.Duration, maxIdle int, allowPrivate bool) *conns {
	c := &conns{timeout: timeout, maxIdle: maxIdle, idle: map[string][]*hconn{}}
	if !allowPrivate {
		c.control = dialGuard
	}
	return c
}

// maxHead bounds an answer's status line and headers (the Transport's
// MaxResponseHeaderBytes, 10 MB by default, did): an endpoint must not make
// the sender hold whatever it sends.
const maxHead = 1 << 20

// hconn is one connection; read counts the bytes read from it, so that an
// attempt knows whether any answer came, and headLimit (when not 0) is how
// far the answer's head may go.
type hconn struct {
	net.Conn
	br        *bufio.Reader
	bw        *bufio.Writer
	read      int64
	headLimit int64
	reused    bool
	since     time.Time // idle since
}

var errHeadTooLong = errors.New("the answer's headers are longer than 1 MiB")

func (h *hconn) Read(p []byte) (int, error) {
	if h.headLimit > 0 && h.read >= h.headLimit {
		return 0, errHeadTooLong
	}
	n, err := h.Conn.Read(p)
	h.read += int64(n)
	return n, err
}

// post sends body to rawURL with headers hdr and returns the answer's
// status: one attempt, within the timeout, cut short when ctx ends. A
// connection kept from an earlier attempt that fails before any answer
// came (the endpoint closed it while it was idle, as servers do after
// their keep-alive timeout) is replaced and the request sent once more on
// a new one: the endpoint may have it twice, which webhook-id lets it
// ignore (at least once).
func (c *conns) post(ctx context.Context, rawURL string, hdr http.Header, body []byte) (int, error) {
	status, err := c.attempt(ctx, rawURL, hdr, body)
	if err != nil {
		// As net/http's client says it, for the delivery's error.
		return 0, fmt.Errorf("Post %q: %w", rawURL, err)
	}
	return status, nil
}

func (c *conns) attempt(ctx context.Context, rawURL string, hdr http.Header, body []byte) (int, error) {
	deadline := time.Now().Add(c.timeout)
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, err
	}
	key, addr, err := endpoint(u)
	if err != nil {
		return 0, err
	}
	for {
		hc, err := c.get(ctx, key, addr, u, deadline)
		if err != nil {
			return 0, err
		}
		req := &http.Request{Method: http.MethodPost, URL: u, Host: u.Host, Header: hdr, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
		status, keep, err := c.roundTrip(ctx, hc, req, deadline)
		if err != nil {
			hc.Close()
			var ne net.Error
			stale := hc.reused && hc.read == 0 && ctx.Err() == nil && !(errors.As(err, &ne) && ne.Timeout())
			if stale {
				continue // the next idle one, or a new one (not reused: the last try)
			}
			return 0, err
		}
		if keep {
			c.put(key, hc)
		} else {
			hc.Close()
		}
		return status, nil
	}
}

// roundTrip writes req on hc and reads its answer (after any interim 1xx);
// keep reports whether hc can carry another request.
func (c *conns) roundTrip(ctx context.Context, hc *hconn, req *http.Request, deadline time.Time) (status int, keep bool, err error) {
	if err := hc.SetDeadline(deadline); err != nil {
		return 0, false, err
	}
	// Shutting down: the blocked read or write returns now. A cut that
	// raced the end of the answer leaves hc unfit to keep.
	stop := context.AfterFunc(ctx, func() { _ = hc.SetDeadline(time.Unix(1, 0)) })
	defer func() {
		if !stop() {
			keep = false
		}
	}()
	hc.read = 0
	if err := req.Write(hc.bw); err != nil {
		return 0, false, errAt(ctx, err)
	}
	if err := hc.bw.Flush(); err != nil {
		return 0, false, errAt(ctx, err)
	}
	for {
		hc.headLimit = hc.read + maxHead
		resp, err := http.ReadResponse(hc.br, req)
		hc.headLimit = 0
		if err != nil {
			return 0, false, errAt(ctx, err)
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue // 100 Continue, 103 Early Hints: the answer follows
		}
		n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, drainMax+1))
		_ = resp.Body.Close()
		keep = err == nil && n <= drainMax && !resp.Close && resp.StatusCode != http.StatusSwitchingProtocols
		return resp.StatusCode, keep, nil
	}
}

// errAt is err, or ctx's when ctx ended (the deadline set by the cut).
func errAt(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return err
}

// endpoint is u's pool key and the address to dial.
func endpoint(u *url.URL) (key, addr string, err error) {
	port := u.Port()
	switch u.Scheme {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
	default:
		return "", "", fmt.Errorf("webhook URL %q: not http or https", u.Redacted())
	}
	addr = net.JoinHostPort(u.Hostname(), port)
	return u.Scheme + "://" + addr, addr, nil
}

// get returns an idle connection to key, or a new one.
func (c *conns) get(ctx context.Context, key, addr string, u *url.URL, deadline time.Time) (*hconn, error) {
	now := time.Now()
	c.mu.Lock()
	for l := c.idle[key]; len(l) > 0; l = c.idle[key] {
		hc := l[len(l)-1]
		c.idle[key] = l[:len(l)-1]
		if now.Sub(hc.since) < idleTimeout {
			c.mu.Unlock()
			hc.reused = true
			return hc, nil
		}
		hc.Close()
	}
	c.mu.Unlock()
	d := net.Dialer{Deadline: deadline, Control: c.control}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "https" {
		cfg := &tls.Config{}
		if c.tls != nil {
			cfg = c.tls.Clone()
		}
		cfg.ServerName = u.Hostname()
		tc := tls.Client(conn, cfg)
		_ = conn.SetDeadline(deadline)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, err
		}
		conn = tc
	}
	hc := &hconn{Conn: conn}
	hc.br = bufio.NewReader(hc)
	hc.bw = bufio.NewWriter(conn)
	return hc, nil
}

// put keeps hc for the next attempt to key, unless enough are kept.
func (c *conns) put(key string, hc *hconn) {
	hc.since = time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || len(c.idle[key]) >= c.maxIdle {
		hc.Close()
		return
	}
	c.idle[key] = append(c.idle[key], hc)
}

// closeIdle closes the connections idle for longer than idleTimeout, or
// all and for good when all is set (the sender stopped).
func (c *conns) closeIdle(all bool) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = c.closed || all
	for key, l := range c.idle {
		kept := l[:0]
		for _, hc := range l {
			if all || now.Sub(hc.since) >= idleTimeout {
				hc.Close()
			} else {
				kept = append(kept, hc)
			}
		}
		c.idle[key] = kept
	}
}
