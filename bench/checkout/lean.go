package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
)

// leanClient is the HTTP/1.1 load generator of the "http" runs (default;
// -load-client net/http uses Go's client instead). The load generator shares
// two cores with the server and the database, and Go's client (a read and a
// write goroutine per connection, header maps, channels) spent about 28 µs
// of CPU per order, as much as the server's gqlgen work: a wrk-like client
// writes a complete request with one write and reads the answer by its
// Content-Length on keep-alive connections, so that what the HTTP runs
// measure is the server. It speaks real HTTP to the real server (server.New
// behind net/http); an answer that is not 200 with an order number and no
// error, or that is not sized by Content-Length, fails the run.
type leanClient struct {
	addr, path, token string
	conns             chan *leanConn // idle keep-alive connections
}

type leanConn struct {
	c   net.Conn
	r   *bufio.Reader
	req []byte
	buf []byte
}

func newLeanClient(rawURL, token string, size int) (*leanClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	return &leanClient{addr: u.Host, path: u.Path, token: token, conns: make(chan *leanConn, size)}, nil
}

// post sends body with the Idempotency-Key key and checks the answer.
func (lc *leanClient) post(body []byte, key string) error {
	var c *leanConn
	select {
	case c = <-lc.conns:
	default:
		nc, err := net.Dial("tcp", lc.addr)
		if err != nil {
			return err
		}
		c = &leanConn{c: nc, r: bufio.NewReaderSize(nc, 4096)}
	}
	if err := lc.roundTrip(c, body, key); err != nil {
		c.c.Close()
		return err
	}
	select {
	case lc.conns <- c:
	default:
		c.c.Close()
	}
	return nil
}

func (lc *leanClient) roundTrip(c *leanConn, body []byte, key string) error {
	q := c.req[:0]
	q = append(q, "POST "...)
	q = append(q, lc.path...)
	q = append(q, " HTTP/1.1\r\nHost: "...)
	q = append(q, lc.addr...)
	q = append(q, "\r\nContent-Type: application/json\r\nAuthorization: Bearer "...)
	q = append(q, lc.token...)
	q = append(q, "\r\nIdempotency-Key: "...)
	q = append(q, key...)
	q = append(q, "\r\nContent-Length: "...)
	q = strconv.AppendInt(q, int64(len(body)), 10)
	q = append(q, "\r\n\r\n"...)
	q = append(q, body...)
	c.req = q
	if _, err := c.c.Write(q); err != nil {
		return err
	}
	status, err := c.r.ReadSlice('\n')
	if err != nil {
		return err
	}
	ok := bytes.HasPrefix(status, []byte("HTTP/1.1 200 "))
	length := -1
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 { // the blank line ending the headers
			break
		}
		if k, v, found := bytes.Cut(line, []byte(":")); found && bytes.EqualFold(bytes.TrimSpace(k), []byte("Content-Length")) {
			if length, err = strconv.Atoi(string(bytes.TrimSpace(v))); err != nil {
				return fmt.Errorf("placeOrder: bad Content-Length %q", v)
			}
		}
	}
	if length < 0 {
		return fmt.Errorf("placeOrder: answer without Content-Length (status %q)", bytes.TrimSpace(status))
	}
	if cap(c.buf) < length {
		c.buf = make([]byte, length)
	}
	raw := c.buf[:length]
	if _, err := io.ReadFull(c.r, raw); err != nil {
		return err
	}
	if !ok || !bytes.Contains(raw, []byte(`"orderSn":"`)) || bytes.Contains(raw, []byte(`"errors"`)) {
		return fmt.Errorf("placeOrder: %s %s", bytes.TrimSpace(status), raw)
	}
	return nil
}
