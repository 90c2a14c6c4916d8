package webhooks

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The attempts' HTTP client (conn.go), against real servers on loopback:
// what net/http's Transport did for the sender, it must still do.

func hdr() http.Header {
	return http.Header{"Webhook-Id": {"msg_1"}, "Content-Type": {"application/cloudevents+json"}}
}

// newCounted is a server answering status, counting the connections it
// accepted and the requests it read with their bodies.
func newCounted(t *testing.T, tlsOn bool, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	var opened atomic.Int64
	s := httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			opened.Add(1)
		}
	}
	if tlsOn {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s, &opened
}

// Sequential and parallel attempts reuse their connections: no more are
// opened than attempts run at once, and every request arrives whole.
func TestConnsKeepConnectionsAlive(t *testing.T) {
	var got atomic.Int64
	s, opened := newCounted(t, false, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if string(b) == `{"n":1}` && r.Header.Get("webhook-id") == "msg_1" && r.Method == http.MethodPost {
			got.Add(1)
		}
		w.WriteHeader(204)
	})
	c := newConns(5*time.Second, 4, true)
	defer c.closeIdle(true)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				if st, err := c.post(context.Background(), s.URL+"/hook?x=1", hdr(), []byte(`{"n":1}`)); err != nil || st != 204 {
					t.Errorf("post = %d, %v", st, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got.Load() != 200 {
		t.Errorf("the server read %d whole requests, want 200", got.Load())
	}
	if n := opened.Load(); n > 4 {
		t.Errorf("%d connections opened for 200 requests 4 at a time, want at most 4", n)
	}
}

// A redirect is an answer, not followed; an interim 1xx is not the
// answer; a body is drained and the connection kept; an over-long body costs its connection, not the answer.
func TestConnsFollowNoRedirectAndDrainAnswers(t *testing.T) {
	var hits atomic.Int64
	s, opened := newCounted(t, false, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		case "/early":
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(204)
		case "/long":
			w.WriteHeader(200)
			_, _ = w.Write([]byte(strings.Repeat("x", drainMax+10)))
		default:
			w.WriteHeader(200)
			_, _ = w.Write([]byte("ok"))
		}
	})
	c := newConns(5*time.Second, 4, true)
	defer c.closeIdle(true)
	if st, err := c.post(context.Background(), s.URL+"/moved", hdr(), nil); err != nil || st != http.StatusFound {
		t.Errorf("redirect: post = %d, %v; want 302, no error", st, err)
	}
	if hits.Load() != 1 {
		t.Errorf("%d requests reached the server, want 1 (the redirect not followed)", hits.Load())
	}
	for range 3 {
		if st, err := c.post(context.Background(), s.URL+"/ok", hdr(), nil); err != nil || st != 200 {
			t.Errorf("post = %d, %v", st, err)
		}
	}
	if st, err := c.post(context.Background(), s.URL+"/early", hdr(), nil); err != nil || st != 204 {
		t.Errorf("103 then 204: post = %d, %v; want the final 204", st, err)
	}
	if n := opened.Load(); n != 1 {
		t.Errorf("%d connections for answers with short bodies, want 1", n)
	}
	if st, err := c.post(context.Background(), s.URL+"/long", hdr(), nil); err != nil || st != 200 {
		t.Errorf("long answer: post = %d, %v", st, err)
	}
	if st, err := c.post(context.Background(), s.URL+"/ok", hdr(), nil); err != nil || st != 200 {
		t.Errorf("after a long answer: post = %d, %v", st, err)
	}
	if n := opened.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (the one that carried the long answer closed)", n)
	}
}

// The timeout covers the whole attempt; the end of ctx (shutdown) cuts it
// at once, and says so.
func TestConnsTimeoutAndCut(t *testing.T) {
	release := make(chan struct{})
	s, _ := newCounted(t, false, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.WriteHeader(204)
	})
	defer close(release)
	c := newConns(300*time.Millisecond, 4, true)
	defer c.closeIdle(true)
	start := time.Now()
	_, err := c.post(context.Background(), s.URL, hdr(), nil)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("hanging endpoint: err = %v, want a timeout", err)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 3*time.Second {
		t.Errorf("hanging endpoint: the attempt took %s, want about the 300 ms timeout", d)
	}

	c = newConns(time.Minute, 4, true)
	defer c.closeIdle(true)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	_, err = c.post(ctx, s.URL, hdr(), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cut: err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("cut: the attempt took %s after its context ended", d)
	}
}

// An endpoint that closes idle connections (as servers do after their
// keep-alive timeout) costs no attempt: the request goes on a new one.
// One that closes every connection after its answer is served too.
func TestConnsSurviveClosedIdleConnections(t *testing.T) {
	var got atomic.Int64
	s, opened := newCounted(t, false, func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		w.WriteHeader(204)
	})
	s.Config.IdleTimeout = 50 * time.Millisecond
	c := newConns(5*time.Second, 4, true)
	defer c.closeIdle(true)
	for range 3 {
		if st, err := c.post(context.Background(), s.URL, hdr(), nil); err != nil || st != 204 {
			t.Fatalf("post = %d, %v", st, err)
		}
		time.Sleep(200 * time.Millisecond) // past the server's idle timeout: it closes the connection
	}
	if got.Load() != 3 || opened.Load() != 3 {
		t.Errorf("%d requests on %d connections, want 3 on 3", got.Load(), opened.Load())
	}

	closing, opened2 := newCounted(t, false, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.WriteHeader(200)
	})
	for range 3 {
		if st, err := c.post(context.Background(), closing.URL, hdr(), nil); err != nil || st != 200 {
			t.Fatalf("Connection: close endpoint: post = %d, %v", st, err)
		}
	}
	if opened2.Load() != 3 {
		t.Errorf("%d connections to an endpoint closing each, want 3", opened2.Load())
	}
}

// https: the server's certificate is checked (an unknown one is refused),
// and with it trusted the attempt goes through.
func TestConnsHTTPS(t *testing.T) {
	s, _ := newCounted(t, true, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	c := newConns(5*time.Second, 4, true)
	defer c.closeIdle(true)
	if _, err := c.post(context.Background(), s.URL, hdr(), nil); err == nil {
		t.Error("a server whose certificate nobody trusts was accepted")
	}
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	c.tls = &tls.Config{RootCAs: pool}
	if st, err := c.post(context.Background(), s.URL, hdr(), nil); err != nil || st != 204 {
		t.Errorf("trusted server: post = %d, %v", st, err)
	}
}

// Without --webhook-allow-private, a connection to a loopback address is
// refused when it is made, whatever the URL's check said.
func TestConnsRefusePrivateAddressesAtConnect(t *testing.T) {
	var got atomic.Int64
	s, _ := newCounted(t, false, func(w http.ResponseWriter, r *http.Request) { got.Add(1) })
	c := newConns(5*time.Second, 4, false)
	defer c.closeIdle(true)
	if _, err := c.post(context.Background(), s.URL, hdr(), nil); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("loopback endpoint: err = %v, want the dial guard's refusal", err)
	}
	if got.Load() != 0 {
		t.Errorf("the loopback server got %d requests", got.Load())
	}
}

// An endpoint whose answer's headers never end fails the attempt at the
// limit, not when the sender's memory runs out or the timeout comes.
func TestConnsBoundTheAnswersHeaders(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		// The request read first, and the connection held open after: a
		// close with unread data is a reset, which may drop what the
		// client had not read yet.
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nX-Long: "))
		chunk := []byte(strings.Repeat("a", 64<<10))
		for range 64 { // 4 MiB of one header line
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
		_, _ = io.Copy(io.Discard, br) // until the client closes
	}()
	c := newConns(30*time.Second, 4, true)
	defer c.closeIdle(true)
	start := time.Now()
	_, err = c.post(context.Background(), "http://"+l.Addr().String(), hdr(), nil)
	if !errors.Is(err, errHeadTooLong) {
		t.Errorf("endless headers: err = %v, want errHeadTooLong", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("endless headers: the attempt took %s", d)
	}
}
