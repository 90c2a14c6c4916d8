package e2e

// A minimal W3C WebDriver client over net/http, enough to drive Debian's
// chromium through chromedriver without a new Go dependency.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	chromedriverPath = "/usr/bin/chromedriver"
	chromiumPath     = "/usr/bin/chromium"
	// The W3C name of an element reference in JSON.
	elementKey = "element-6066-11e4-a52e-4f735466cecf"
)

// browser is one chromedriver process with one session.
type browser struct {
	t      *testing.T
	base   string // http://127.0.0.1:PORT/session/ID
	log    *lockedBuffer
	artDir string
}

// lockedBuffer is output a process writes while a test reads it (a
// browser's log, a server's stderr).
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startBrowser skips when chromedriver or chromium is missing, unless
// STOREFRONT_TEST_REQUIRE_BROWSER=1 (CI), where a skip would hide a regression.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	for _, p := range []string{chromedriverPath, chromiumPath} {
		if _, err := os.Stat(p); err != nil {
			msg := fmt.Sprintf("%s not found (install with: bash .ci/browser-deps.sh)", p)
			if os.Getenv("STOREFRONT_TEST_REQUIRE_BROWSER") == "1" {
				t.Fatal(msg + "; STOREFRONT_TEST_REQUIRE_BROWSER=1 forbids skipping")
			}
			t.Skip(msg)
		}
	}
	addr := freeAddr(t)
	port := addr[strings.LastIndex(addr, ":")+1:]
	b := &browser{t: t, log: &lockedBuffer{}, artDir: artifactDir(t)}
	cmd := exec.Command(chromedriverPath, "--port="+port, "--allowed-ips=127.0.0.1")
	cmd.Stdout, cmd.Stderr = b.log, b.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting chromedriver: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	root := "http://" + addr
	b.waitFor("chromedriver ready", 20*time.Second, func() (bool, error) {
		var st struct{ Ready bool }
		err := b.do("GET", root+"/status", nil, &st)
		return err == nil && st.Ready, nil
	})

	profile := t.TempDir()
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName":       "chrome",
		"pageLoadStrategy":  "normal",
		"goog:loggingPrefs": map[string]string{"browser": "ALL"},
		"goog:chromeOptions": map[string]any{
			"binary": chromiumPath,
			"args": []string{
				"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
				"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
				"--window-size=1200,900", "--lang=zh-CN", "--user-data-dir=" + profile,
			},
		},
	}}}
	var sess struct{ SessionID string }
	if err := b.do("POST", root+"/session", caps, &sess); err != nil {
		t.Fatalf("creating a chromium session: %v\nchromedriver log:\n%s", err, b.log)
	}
	b.base = root + "/session/" + sess.SessionID
	t.Cleanup(func() {
		if t.Failed() {
			b.screenshot("failure")
			b.dumpConsole()
		}
		_ = b.do("DELETE", b.base, nil, nil)
	})
	return b
}

// artifactDir is $STOREFRONT_ARTIFACTS when set (CI keeps it), else a temp dir.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("STOREFRONT_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// do sends one WebDriver command and decodes the "value" member into out.
func (b *browser) do(method, url string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct{ Value json.RawMessage }
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("%s %s: %d %q", method, url, resp.StatusCode, raw)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error, Message string }
		_ = json.Unmarshal(env.Value, &e)
		return fmt.Errorf("%s %s: %s: %s", method, url, e.Error, e.Message)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(env.Value, out)
}

func (b *browser) cmd(method, path string, in, out any) {
	b.t.Helper()
	if err := b.do(method, b.base+path, in, out); err != nil {
		b.t.Fatal(err)
	}
}

func (b *browser) navigate(url string) {
	b.t.Helper()
	b.cmd("POST", "/url", map[string]string{"url": url}, nil)
}

// find returns the element reference of the one element matching css.
func (b *browser) find(css string) string {
	b.t.Helper()
	var ref map[string]string
	b.cmd("POST", "/element", map[string]string{"using": "css selector", "value": css}, &ref)
	return ref[elementKey]
}

// click is WebDriver's element click: scrolled into view, hit-tested, a real
// mouse event sequence, like a person's click.
func (b *browser) click(css string) {
	b.t.Helper()
	b.cmd("POST", "/element/"+b.find(css)+"/click", map[string]any{}, nil)
}

// doubleClick presses the mouse twice on the element as one input sequence,
// so the page gets both clicks with no WebDriver round trip between them.
func (b *browser) doubleClick(css string) {
	b.t.Helper()
	el := map[string]string{elementKey: b.find(css)}
	b.cmd("POST", "/actions", map[string]any{"actions": []any{map[string]any{
		"type": "pointer", "id": "mouse", "parameters": map[string]string{"pointerType": "mouse"},
		"actions": []any{
			map[string]any{"type": "pointerMove", "origin": el, "x": 0, "y": 0},
			map[string]any{"type": "pointerDown", "button": 0},
			map[string]any{"type": "pointerUp", "button": 0},
			map[string]any{"type": "pointerDown", "button": 0},
			map[string]any{"type": "pointerUp", "button": 0},
		},
	}}}, nil)
	b.cmd("DELETE", "/actions", nil, nil)
}

// exec runs a synchronous script in the page and decodes its result.
func (b *browser) exec(script string, out any, args ...any) {
	b.t.Helper()
	if args == nil {
		args = []any{}
	}
	b.cmd("POST", "/execute/sync", map[string]any{"script": script, "args": args}, out)
}

// waitFor polls cond until it holds; the deadline only bounds a hung page,
// nothing is asserted about speed.
func (b *browser) waitFor(what string, limit time.Duration, cond func() (bool, error)) {
	b.t.Helper()
	deadline := time.Now().Add(limit)
	var last error
	for {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		if time.Now().After(deadline) {
			b.t.Fatalf("timed out waiting for %s (last error: %v)", what, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// screenshot saves a PNG of the viewport into the artifact dir and returns its path.
func (b *browser) screenshot(name string) string {
	var enc string
	if err := b.do("GET", b.base+"/screenshot", nil, &enc); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	png, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	p := filepath.Join(b.artDir, fmt.Sprintf("%s-%s.png", strings.ReplaceAll(b.t.Name(), "/", "_"), name))
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	b.t.Logf("screenshot saved: %s", p)
	return p
}

// dumpConsole logs the page's console (JS errors included) to explain a failure.
func (b *browser) dumpConsole() {
	var entries []struct {
		Level   string
		Message string
	}
	if err := b.do("POST", b.base+"/se/log", map[string]string{"type": "browser"}, &entries); err != nil {
		b.t.Logf("browser console unavailable: %v", err)
		return
	}
	for _, e := range entries {
		b.t.Logf("browser console %s: %s", e.Level, e.Message)
	}
}
