package store_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"storefront/ent"
	"storefront/ent/idempotency"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// A COMMIT that the server does not answer (here: a proxy between the driver
// and MariaDB stops forwarding, as a frozen server would) must not hold the
// caller past its deadline. The answer is ErrCommitUnknown (an UNAVAILABLE),
// and the transaction does land once the server answers again: "unknown" is
// the truth, which is why clients retry with their idempotency key.
func TestCommitAnswersByTheDeadline(t *testing.T) {
	spec := testdb.Spec(t, testdb.MySQL)
	cfg, err := mysql.ParseDSN(strings.TrimPrefix(spec, "mysql:"))
	if err != nil {
		t.Fatal(err)
	}
	direct, err := store.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if err := direct.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, cfg.Addr)
	cfg.Addr = p.addr
	proxied, err := store.Open(context.Background(), "mysql:"+cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { p.resume(); proxied.Close() }()

	const timeout = 500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	now := time.Now().UTC().Truncate(time.Second)
	// Whatever happens, the "server" answers again after a while, so a
	// WithTx that waits on COMMIT fails this test instead of hanging it.
	thaw := time.AfterFunc(timeout+3*time.Second, p.resume)
	defer thaw.Stop()
	start := time.Now()
	err = store.WithTx(ctx, proxied, func(ctx context.Context, tx *ent.Tx) error {
		_, err := tx.Idempotency.Create().SetUserID("u").SetKey("commit-test").SetRequestHash("h").
			SetState("PENDING").SetLeaseUntil(now).SetCreatedAt(now).SetExpiresAt(now.Add(time.Hour)).Save(ctx)
		p.pause() // the server "freezes" between the last statement and COMMIT
		return err
	})
	took := time.Since(start)
	if !errors.Is(err, store.ErrCommitUnknown) || !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("WithTx with COMMIT unanswered: %v, want ErrCommitUnknown (an ErrUnavailable)", err)
	}
	if took > timeout+time.Second {
		t.Fatalf("WithTx answered after %v with a deadline of %v", took, timeout)
	}
	t.Logf("answered %v after start with a %v deadline: %v", took.Round(time.Millisecond), timeout, err)

	p.resume()
	landed := false
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end) && !landed; time.Sleep(20 * time.Millisecond) {
		landed, err = direct.Client.Idempotency.Query().Where(idempotency.Key("commit-test")).Exist(context.Background())
		if err != nil {
			t.Fatal(err)
		}
	}
	if !landed {
		t.Fatal("the transaction whose COMMIT was in flight never landed after the server answered again")
	}
}

// proxy forwards TCP to a server and can stop forwarding in both directions
// (bytes read meanwhile are held, not dropped) until resumed.
type proxy struct {
	addr   string
	mu     sync.Mutex
	paused bool
	gate   chan struct{} // closed while running
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &proxy{addr: ln.Addr().String(), gate: make(chan struct{})}
	close(p.gate)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go p.pipe(s, c)
			go p.pipe(c, s)
		}
	}()
	return p
}

func (p *proxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			gate := p.gate
			p.mu.Unlock()
			<-gate
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // EOF or a closed side: the other pipe closes too
			return
		}
	}
}

func (p *proxy) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.paused {
		p.paused, p.gate = true, make(chan struct{})
	}
}

func (p *proxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused {
		p.paused = false
		close(p.gate)
	}
}
