package tracing

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// sampler is parent-based with a ratio for new traces. With record (the
// tail rules on), what the ratio or the parent did not sample is still
// recorded, so the tail can keep it if it ends in an error or slowly.
type sampler struct {
	ratio  sdktrace.Sampler
	record bool
}

func (s sampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	parent := trace.SpanContextFromContext(p.ParentContext)
	res := sdktrace.SamplingResult{Tracestate: parent.TraceState()}
	switch {
	case parent.IsValid() && parent.IsSampled():
		res.Decision = sdktrace.RecordAndSample
		return res
	case parent.IsValid() && !parent.IsRemote():
		// A local parent the ratio dropped: recorded only if it is.
		if s.record && trace.SpanFromContext(p.ParentContext).IsRecording() {
			res.Decision = sdktrace.RecordOnly
		}
		return res
	case !parent.IsValid():
		if r := s.ratio.ShouldSample(p); r.Decision == sdktrace.RecordAndSample {
			return r
		}
	}
	if s.record {
		res.Decision = sdktrace.RecordOnly
	}
	return res
}

func (s sampler) Description() string { return "storefront: parent-based, " + s.ratio.Description() }

// tail holds the recorded spans the sampler did not sample, per local root
// (a span whose parent is remote or absent: a request, a dispatch pass, a
// webhook attempt), until that root ends; then it hands them all to next
// when the root or one of them ended in an error (keepErrors) or the root
// took keepSlow or longer, and drops them otherwise. Spans the sampler
// sampled pass straight through. A child that ends after its root (a
// goroutine outliving its request) is dropped with an undecided trace.
// Bounded: at most maxPending roots and maxSpans spans per root are held;
// beyond, spans of unsampled traces are dropped.
type tail struct {
	next       sdktrace.SpanProcessor
	keepErrors bool
	keepSlow   time.Duration

	mu    sync.Mutex
	roots map[trace.SpanID]*held        // by local root
	of    map[trace.SpanID]trace.SpanID // live recorded span → its local root
}

type held struct {
	spans []sdktrace.ReadOnlySpan
	keep  bool
}

const (
	maxPending = 10000
	maxSpans   = 512
)

func newTail(next sdktrace.SpanProcessor, keepErrors bool, keepSlow time.Duration) *tail {
	return &tail{next: next, keepErrors: keepErrors, keepSlow: keepSlow,
		roots: map[trace.SpanID]*held{}, of: map[trace.SpanID]trace.SpanID{}}
}

func (t *tail) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) {
	if s.SpanContext().IsSampled() {
		t.next.OnStart(ctx, s)
		return
	}
	id, parent := s.SpanContext().SpanID(), s.Parent()
	t.mu.Lock()
	defer t.mu.Unlock()
	if !parent.IsValid() || parent.IsRemote() {
		if len(t.roots) < maxPending {
			t.roots[id] = &held{}
			t.of[id] = id
		}
		return
	}
	if root, ok := t.of[parent.SpanID()]; ok {
		t.of[id] = root
	}
}

func (t *tail) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.SpanContext().IsSampled() {
		t.next.OnEnd(s)
		return
	}
	id := s.SpanContext().SpanID()
	failed := t.keepErrors && s.Status().Code == codes.Error
	t.mu.Lock()
	root, ok := t.of[id]
	delete(t.of, id)
	h := t.roots[root]
	if !ok || h == nil {
		t.mu.Unlock()
		return
	}
	if root != id {
		if len(h.spans) < maxSpans {
			h.spans = append(h.spans, s)
		}
		h.keep = h.keep || failed
		t.mu.Unlock()
		return
	}
	delete(t.roots, root)
	t.mu.Unlock()
	if !h.keep && !failed && (t.keepSlow <= 0 || s.EndTime().Sub(s.StartTime()) < t.keepSlow) {
		return
	}
	for _, c := range h.spans {
		t.next.OnEnd(kept{c})
	}
	t.next.OnEnd(kept{s})
}

func (t *tail) Shutdown(ctx context.Context) error   { return t.next.Shutdown(ctx) }
func (t *tail) ForceFlush(ctx context.Context) error { return t.next.ForceFlush(ctx) }

// kept is a span the tail keeps, exported as sampled (the batch processor
// drops spans that are not).
type kept struct{ sdktrace.ReadOnlySpan }

func (k kept) SpanContext() trace.SpanContext {
	sc := k.ReadOnlySpan.SpanContext()
	return sc.WithTraceFlags(sc.TraceFlags().WithSampled(true))
}
