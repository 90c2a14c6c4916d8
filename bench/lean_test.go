package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// leanConn is a minimal HTTP/1.1 keep-alive client on one connection, the
// wrk of gqlceiling's README in Go: requests are prebuilt bytes, the answer
// is read by its status line, Content-Length or chunks, nothing else. Go's
// net/http client costs about as much CPU per request as a cached answer
// does in the server, and on a 2-core machine it would set the rate of
// every cheap target (BenchmarkProductPage uses it; its ratios are between
// expensive targets).
type leanConn struct {
	c    net.Conn
	r    *bufio.Reader
	body []byte
}

func dialLean(addr string) (*leanConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &leanConn{c: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

// leanPost and leanGet build a request once.
func leanPost(addr, path string, body []byte, headers ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", path, addr, len(body))
	for i := 0; i+1 < len(headers); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", headers[i], headers[i+1])
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

func leanGet(addr, pathAndQuery string, headers ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\n", pathAndQuery, addr)
	for i := 0; i+1 < len(headers); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", headers[i], headers[i+1])
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// do sends req and returns the status and body (valid until the next do).
func (l *leanConn) do(req []byte) (int, []byte, error) {
	if _, err := l.c.Write(req); err != nil {
		return 0, nil, err
	}
	line, err := l.r.ReadSlice('\n')
	if err != nil {
		return 0, nil, err
	}
	if len(line) < 12 {
		return 0, nil, fmt.Errorf("bad status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, nil, fmt.Errorf("bad status line %q", line)
	}
	length, chunked := -1, false
	for {
		h, err := l.r.ReadSlice('\n')
		if err != nil {
			return 0, nil, err
		}
		if len(h) <= 2 {
			break
		}
		if k, v, ok := bytes.Cut(h, []byte(":")); ok {
			v = bytes.TrimSpace(v)
			switch {
			case asciiEqualFold(k, "Content-Length"):
				length, _ = strconv.Atoi(string(v))
			case asciiEqualFold(k, "Transfer-Encoding"):
				chunked = asciiEqualFold(v, "chunked")
			}
		}
	}
	l.body = l.body[:0]
	switch {
	case status == 304 || status == 204:
	case chunked:
		for {
			sz, err := l.r.ReadSlice('\n')
			if err != nil {
				return 0, nil, err
			}
			n, err := strconv.ParseInt(string(bytes.TrimSpace(sz)), 16, 64)
			if err != nil {
				return 0, nil, fmt.Errorf("bad chunk size %q", sz)
			}
			if n == 0 {
				if _, err := l.r.ReadSlice('\n'); err != nil {
					return 0, nil, err
				}
				break
			}
			if err := l.read(int(n) + 2); err != nil {
				return 0, nil, err
			}
			l.body = l.body[:len(l.body)-2]
		}
	case length >= 0:
		if err := l.read(length); err != nil {
			return 0, nil, err
		}
	default:
		return 0, nil, errors.New("answer without a length")
	}
	return status, l.body, nil
}

func (l *leanConn) read(n int) error {
	start := len(l.body)
	l.body = append(l.body, make([]byte, n)...)
	_, err := io.ReadFull(l.r, l.body[start:])
	return err
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c, d := b[i]|0x20, s[i]|0x20
		if c != d {
			return false
		}
	}
	return true
}

func (l *leanConn) close() { l.c.Close() }

// leanRun is one closed-loop load: conns connections for d, each sending
// next(conn, i) for its i-th request and checking the answer with check.
type leanRun struct {
	addr  string
	conns int
	d     time.Duration
	next  func(conn, i int) []byte
	check func(req []byte, status int, body []byte) error
	// count says which answers the rate counts (all when nil).
	count func(req []byte) bool
	// stopped, when set, is called when the interval ends, to release
	// connections that next holds (ratioGate).
	stopped func()
}

// leanResult is what a load measured: the answers per second counted by
// count, and how long each answer within the interval took (counted and
// not counted ones apart).
type leanResult struct {
	rate               float64
	counted, uncounted []time.Duration
}

// leanLoad runs the load; the error is the first one any connection met.
func leanLoad(run leanRun) (leanResult, error) {
	addr, conns, d, next, check, count := run.addr, run.conns, run.d, run.next, run.check, run.count
	var n atomic.Int64
	var firstErr error
	// Each connection keeps its own timings (no lock on the hot path).
	counted, uncounted := make([][]time.Duration, conns), make([][]time.Duration, conns)
	var once sync.Once
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := dialLean(addr)
			if err != nil {
				once.Do(func() { firstErr = err })
				return
			}
			defer l.close()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				req := next(c, i)
				sent := time.Now()
				status, body, err := l.do(req)
				took := time.Since(sent)
				if err == nil && check != nil {
					err = check(req, status, body)
				}
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				select {
				case <-stop:
					return // finished after the interval: not counted
				default:
				}
				if count == nil || count(req) {
					n.Add(1)
					counted[c] = append(counted[c], took)
				} else {
					uncounted[c] = append(uncounted[c], took)
				}
			}
		}()
	}
	time.Sleep(d) // the measured interval itself, not a wait for an event
	close(stop)
	elapsed := time.Since(start)
	if run.stopped != nil {
		run.stopped()
	}
	wg.Wait()
	return leanResult{rate: float64(n.Load()) / elapsed.Seconds(), counted: slices.Concat(counted...), uncounted: slices.Concat(uncounted...)}, firstErr
}
