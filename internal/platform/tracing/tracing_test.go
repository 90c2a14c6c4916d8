package tracing

import (
	"context"
	"database/sql/driver"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// newTest is tracing on, exporting to memory (no OTLP receiver).
func newTest(t *testing.T, c Config) (*Tracing, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	c.Exporter = exp
	tr, err := New(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return tr, exp
}

func flushed(t *testing.T, tr *Tracing, exp *tracetest.InMemoryExporter) tracetest.SpanStubs {
	t.Helper()
	if err := tr.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	return exp.GetSpans()
}

// Off, everything a hot path calls returns at once and allocates nothing:
// the request path costs what it cost before tracing.
func TestOffAllocatesNothing(t *testing.T) {
	var off *Tracing
	ctx := context.Background()
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	var c driver.Connector = dsnless{}
	n := testing.AllocsPerRun(100, func() {
		sctx, span := off.Start(ctx, "x")
		span.SetName("y")
		End(span, nil)
		off.Inject(sctx, nil)
		if Traceparent(sctx) != "" || off.On() || off.Propagator() != nil {
			t.Fatal("tracing off answered as on")
		}
		_ = off.Server("/graphql", h)
		_ = off.Connector("sqlite", c)
	})
	if n != 0 {
		t.Errorf("tracing off: %.0f allocations per call, want 0", n)
	}
	if off.Connector("sqlite", c) != c {
		t.Error("Connector off wrapped the connector")
	}
}

type dsnless struct{}

func (dsnless) Connect(context.Context) (driver.Conn, error) { return nil, errors.New("none") }
func (dsnless) Driver() driver.Driver                        { return nil }

func TestEnabled(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_SDK_DISABLED", "")
	if Enabled(DefaultConfig()) {
		t.Error("the default config is on")
	}
	c := DefaultConfig()
	c.Endpoint = "http://127.0.0.1:4318"
	if !Enabled(c) {
		t.Error("an endpoint did not switch tracing on")
	}
	t.Setenv("OTEL_SDK_DISABLED", "true")
	if Enabled(c) {
		t.Error("OTEL_SDK_DISABLED=true left tracing on")
	}
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")
	if !Enabled(DefaultConfig()) {
		t.Error("OTEL_EXPORTER_OTLP_ENDPOINT did not switch tracing on")
	}
}

func TestTracesURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/traces"},
		{"http://127.0.0.1:4318/", "http://127.0.0.1:4318/v1/traces"},
		{"https://otel.example/v1/traces", "https://otel.example/v1/traces"},
		{"https://otel.example/custom/path", "https://otel.example/custom/path"},
	} {
		if got := tracesURL(tc.in); got != tc.want {
			t.Errorf("tracesURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		c  func(*Config)
		ok bool
	}{
		{func(*Config) {}, true},
		{func(c *Config) { c.Ratio = 1.5 }, false},
		{func(c *Config) { c.Ratio = -0.1 }, false},
		{func(c *Config) { c.KeepSlow = -time.Second }, false},
		{func(c *Config) { c.Endpoint = "127.0.0.1:4318" }, false},
		{func(c *Config) { c.Endpoint = "http://127.0.0.1:4318" }, true},
	} {
		c := DefaultConfig()
		tc.c(&c)
		if err := c.Validate(); (err == nil) != tc.ok {
			t.Errorf("Validate(%+v) = %v, want ok %v", c, err, tc.ok)
		}
	}
}

// A request's traceparent is the parent of its server span, and the span
// carries the status the handler wrote.
func TestServerSpanContinuesTheCallersTrace(t *testing.T) {
	tr, exp := newTest(t, DefaultConfig())
	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	var inside trace.SpanContext
	h := tr.Server("/graphql", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inside = trace.SpanContextFromContext(r.Context())
		w.WriteHeader(http.StatusTeapot)
	}))
	req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
	req.Header.Set("traceparent", parent)
	h.ServeHTTP(httptest.NewRecorder(), req)
	spans := flushed(t, tr, exp)
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.SpanContext.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" || s.Parent.SpanID().String() != "b7ad6b7169203331" {
		t.Errorf("span %s under %s, want trace 0af7651916cd43dd8448eb211c80319c under b7ad6b7169203331", s.SpanContext.TraceID(), s.Parent.SpanID())
	}
	if inside.SpanID() != s.SpanContext.SpanID() {
		t.Error("the handler's context does not carry the server span")
	}
	if s.Name != "POST /graphql" || attr(s, "http.response.status_code") != "418" {
		t.Errorf("span %q status %s, want POST /graphql 418", s.Name, attr(s, "http.response.status_code"))
	}
}

func attr(s tracetest.SpanStub, key string) string {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value.Emit()
		}
	}
	return ""
}

func TestTraceparentRoundTrip(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	if got := Traceparent(WithTraceparent(context.Background(), tp)); got != tp {
		t.Errorf("round trip = %q, want %q", got, tp)
	}
	for _, bad := range []string{"", "00-zz-b7ad6b7169203331-01", "nonsense"} {
		if SpanContextOf(bad).IsValid() {
			t.Errorf("SpanContextOf(%q) is valid", bad)
		}
	}
}

// Below ratio 1, what the ratio dropped is kept when it ends in an error
// or slowly, children and all, and dropped otherwise; what the ratio kept
// passes untouched.
func TestTailKeepsErrorsAndSlowRequests(t *testing.T) {
	c := DefaultConfig()
	c.Ratio, c.KeepSlow = 0, 50*time.Millisecond
	tr, exp := newTest(t, c)
	ctx := context.Background()
	request := func(name string, took time.Duration, fail bool) {
		rctx, root := tr.Start(ctx, name)
		_, child := tr.Start(rctx, name+"/sql")
		if fail {
			child.SetStatus(codes.Error, "boom")
		}
		child.End()
		start := time.Now()
		root.End(trace.WithTimestamp(start.Add(took)))
	}
	request("fast", time.Millisecond, false)
	request("slow", 80*time.Millisecond, false)
	request("failed", time.Millisecond, true)
	got := map[string]bool{}
	for _, s := range flushed(t, tr, exp) {
		got[s.Name] = true
		if !s.SpanContext.IsSampled() {
			t.Errorf("%s exported unsampled", s.Name)
		}
	}
	for _, name := range []string{"slow", "slow/sql", "failed", "failed/sql"} {
		if !got[name] {
			t.Errorf("%s was dropped; kept %v", name, got)
		}
	}
	if got["fast"] || got["fast/sql"] {
		t.Errorf("the fast request that did not fail was kept: %v", got)
	}
	if len(tr.tail.roots) != 0 || len(tr.tail.of) != 0 {
		t.Errorf("the tail still holds %d roots, %d spans", len(tr.tail.roots), len(tr.tail.of))
	}
}

// Parent-based: an upstream's sampled flag is followed whatever the ratio.
func TestSampledParentIsFollowed(t *testing.T) {
	c := DefaultConfig()
	c.Ratio, c.KeepErrors, c.KeepSlow = 0, false, 0
	tr, exp := newTest(t, c)
	_, s := tr.Start(WithTraceparent(context.Background(), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"), "sampled upstream")
	s.End()
	_, s = tr.Start(WithTraceparent(context.Background(), "00-0af7651916cd43dd8448eb211c80319d-b7ad6b7169203331-00"), "not sampled upstream")
	if s.IsRecording() {
		t.Error("a span under an unsampled parent records with the tail rules off")
	}
	s.End()
	_, s = tr.Start(context.Background(), "new trace at ratio 0")
	s.End()
	spans := flushed(t, tr, exp)
	if len(spans) != 1 || spans[0].Name != "sampled upstream" {
		t.Errorf("exported %v, want only the sampled upstream's span", names(spans))
	}
}

func names(ss tracetest.SpanStubs) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

func TestScrub(t *testing.T) {
	for _, tc := range []struct {
		in, want  string
		backslash bool
	}{
		{"SELECT id FROM orders WHERE order_sn = ? AND user_id = $2", "SELECT id FROM orders WHERE order_sn = ? AND user_id = $2", false},
		{"INSERT INTO outbox (payload, events) VALUES ('{\"orderSn\":\"2026\"}', 3)", "INSERT INTO outbox (payload, events) VALUES (?, ?)", false},
		{"UPDATE sku SET stock = stock - 2 WHERE id = 17 AND stock >= 2", "UPDATE sku SET stock = stock - ? WHERE id = ? AND stock >= ?", false},
		{"VALUES (_utf8mb4 X'e4b8ade69687', 'it''s', E'x', 1.5e3)", "VALUES (_utf8mb4 ?, ?, ?, ?)", false},
		{`SELECT "t1"."c2", ` + "`t3`.`c4`" + ` FROM t1`, `SELECT "t1"."c2", ` + "`t3`.`c4`" + ` FROM t1`, false},
		// PostgreSQL: a backslash is itself; the next literal is a literal.
		{`VALUES ('C:\', 'secret')`, "VALUES (?, ?)", false},
		// MySQL: a backslash escapes the quote after it.
		{`VALUES ('it\'s', 'secret')`, "VALUES (?, ?)", true},
		{"SELECT 1 -- 'a comment'\nFROM t", "SELECT ? \nFROM t", false},
		{"SELECT ' || chr(0) || '", "SELECT ?", false},
	} {
		if got := Scrub(tc.in, tc.backslash); got != tc.want {
			t.Errorf("Scrub(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Whatever a value holds, quoted as PostgreSQL and SQLite quote it (a
// doubled quote) or as MySQL does (a backslash before a quote or a
// backslash), none of it stays in the scrubbed text.
func FuzzScrubKeepsNoLiteral(f *testing.F) {
	f.Add("secret-value", false)
	f.Add(`C:\`, false)
	f.Add(`it's \ 'quoted'`, true)
	f.Add("-- not a comment", false)
	f.Fuzz(func(t *testing.T, v string, backslash bool) {
		var lit strings.Builder
		lit.WriteByte('\'')
		for i := 0; i < len(v); i++ {
			switch c := v[i]; {
			case c == '\'':
				if backslash {
					lit.WriteString(`\'`)
				} else {
					lit.WriteString("''")
				}
			case c == '\\' && backslash:
				lit.WriteString(`\\`)
			default:
				lit.WriteByte(c)
			}
		}
		lit.WriteByte('\'')
		q := "INSERT INTO t VALUES (" + lit.String() + ", " + lit.String() + ")"
		if got := Scrub(q, backslash); got != "INSERT INTO t VALUES (?, ?)" {
			t.Fatalf("Scrub(%q) = %q", q, got)
		}
	})
}

func TestOperation(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT 1", "SELECT"},
		{"  insert into t values (?)", "INSERT"},
		{"(SELECT 1) UNION (SELECT 2)", "SELECT"},
		{"START TRANSACTION", "START"},
		{"COMMIT", "COMMIT"},
		{"", "SQL"},
	} {
		if got := operation(tc.in); got != tc.want {
			t.Errorf("operation(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

var _ sdktrace.SpanExporter = (*tracetest.InMemoryExporter)(nil)

// A line logged in a span carries its trace_id and span_id; one logged
// outside any span carries neither.
func TestLogLinesCarryTheTrace(t *testing.T) {
	tr, _ := newTest(t, DefaultConfig())
	var buf strings.Builder
	log := slog.New(LogHandler(slog.NewJSONHandler(&buf, nil)))
	ctx, span := tr.Start(context.Background(), "request")
	log.InfoContext(ctx, "in a span")
	span.End()
	log.InfoContext(context.Background(), "outside")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	sc := span.SpanContext()
	if want := `"trace_id":"` + sc.TraceID().String() + `","span_id":"` + sc.SpanID().String() + `"`; !strings.Contains(lines[0], want) {
		t.Errorf("line in a span %s lacks %s", lines[0], want)
	}
	if strings.Contains(lines[1], "trace_id") {
		t.Errorf("line outside a span has a trace: %s", lines[1])
	}
}
