// Package e2e runs the real binary: it builds cmd/storefront once, starts
// `serve` on free ports and talks to it over real HTTP.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"storefront/internal/testsupport/nettest"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binDir    string // the build's folder; TestMain removes it
	binPath   string
	buildErr  error
)

// TestMain removes the binary's folder after the run (issue 25: each run
// left a 46 MB /tmp/storefront-e2e* behind). Servers are stopped by their
// tests' cleanups, so nothing runs the binary by then.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		if err := os.RemoveAll(binDir); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: removing %s: %v\n", binDir, err)
		}
	}
	os.Exit(code)
}

func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "storefront-e2e")
		if err != nil {
			buildErr = err
			return
		}
		binDir = dir
		binPath = filepath.Join(dir, "storefront")
		out, err := exec.Command("go", "build", "-o", binPath, "storefront/cmd/storefront").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// Server is one running `storefront serve` process.
type Server struct {
	URL           string
	AdminToken    string
	CustomerToken string
	cmd           *exec.Cmd
	stderr        *lockedBuffer
}

// freeAddr is nettest.FreeAddr, named as the suites here call it.
func freeAddr(t *testing.T) string { return nettest.FreeAddr(t) }

// Start runs `storefront serve --demo --db db` plus extra args and waits for /readyz.
func Start(t *testing.T, db string, extra ...string) *Server {
	t.Helper()
	return StartAt(t, freeAddr(t), db, extra...)
}

// StartAt is Start listening on addr: a restart on the same address keeps
// the instance's default --instance-id (the host name and the address).
func StartAt(t *testing.T, addr, db string, extra ...string) *Server {
	t.Helper()
	args := append([]string{"serve", "--demo", "--db", db, "--addr", addr}, extra...)
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), "STOREFRONT_JWT_SECRET=e2e-secret-0123456789abcdef")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://" + addr, cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop(t)
		if t.Failed() {
			// What the server logged as errors says why it answered INTERNAL.
			var errs []string
			for _, l := range strings.Split(s.stderr.String(), "\n") {
				if strings.Contains(l, "level=ERROR") || strings.Contains(l, `"level":"ERROR"`) {
					errs = append(errs, l)
				}
			}
			if len(errs) > 20 {
				errs = append(errs[:20], fmt.Sprintf("… %d more", len(errs)-20))
			}
			t.Logf("server %s logged %d errors:\n%s", s.URL, len(errs), strings.Join(errs, "\n"))
		}
	})
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(60 * time.Second)
	for s.AdminToken == "" || s.CustomerToken == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("server exited early; stderr:\n%s", s.stderr)
			}
			if v, ok := strings.CutPrefix(l, "demo admin token:"); ok {
				s.AdminToken = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(l, "demo customer token:"); ok {
				s.CustomerToken = strings.TrimSpace(v)
			}
		case <-deadline:
			t.Fatalf("server did not print tokens in time; stderr:\n%s", s.stderr)
		}
	}
	go func() {
		for range lines {
		}
	}()
	for i := 0; ; i++ {
		resp, err := http.Get(s.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		if i > 200 {
			t.Fatalf("server never became ready; stderr:\n%s", s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop sends SIGTERM and waits (the graceful path), killing after a timeout.
func (s *Server) Stop(t *testing.T) {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil && t != nil {
			t.Errorf("server exit: %v; stderr:\n%s", err, s.stderr)
		}
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// Response is a GraphQL response.
type Response struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

// Code returns the first error's extensions.code.
func (r *Response) Code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// Query posts a GraphQL request with an optional bearer token.
func (s *Server) Query(t *testing.T, token, query string, vars map[string]any) *Response {
	t.Helper()
	return s.post(t, token, "", query, vars)
}

// post sends one GraphQL request; token and idempotency key are optional.
func (s *Server) post(t *testing.T, token, idempotencyKey, query string, vars map[string]any) *Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /graphql: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r Response
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("decoding %d response %q: %v", resp.StatusCode, raw, err)
	}
	return &r
}
