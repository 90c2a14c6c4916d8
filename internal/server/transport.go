package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"storefront/internal/catalog"
	"storefront/internal/platform/metrics"
	"storefront/internal/vocab/errs"
	"storefront/resolvers"
)

// httpTransport serves GraphQL over HTTP (GET and POST application/json)
// as the GraphQL-over-HTTP specification asks, which gqlgen's transports
// do not quite (graphql-http's auditServer: 5 warnings with them):
//
//   - the response's media type follows Accept: application/graphql-response+json
//     when the client lists it before application/json, else application/json
//     (also for */*, application/* and no Accept at all);
//   - a request that is not a GraphQL request (body not JSON, no query, a
//     parameter of the wrong type) is 400;
//   - a request refused before execution (parse, validation, variable
//     coercion, QUERY_TOO_COMPLEX, an unknown persisted query) answers
//     without a data entry; with application/json its status is 200 (errors
//     do not hide in status codes, API-CONVENTIONS), with
//     application/graphql-response+json it is 400, as that media type requires;
//   - a mutation over GET is 405, with Allow: POST.
//
// It is also where the response cache sits: an anonymous request whose
// stored answer is current is answered with the bytes before gqlgen parses
// anything, and a GET's cacheable answer carries a strong ETag and
// Cache-Control: public, max-age=<stock TTL>.
type httpTransport struct {
	cache *ResponseCache // nil: the response cache is off
	limit *RateLimiter   // nil: mutations are not rate limited
	m     *metrics.Metrics
	gone  *disconnects
}

var _ graphql.Transport = (*httpTransport)(nil)

const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// Header values shared by every response; net/http only reads them.
var (
	hdrJSON            = []string{mediaJSON}
	hdrGraphQLResponse = []string{mediaGraphQLResponse}
	hdrVary            = []string{"Accept, Authorization"}
	hdrNoStore         = []string{"no-store"}
	hdrAllowPost       = []string{"POST"}
)

func (t *httpTransport) Supports(r *http.Request) bool {
	if header(r.Header, "Upgrade") != "" {
		return false
	}
	switch r.Method {
	case http.MethodGet:
		return true
	case http.MethodPost:
		ct := header(r.Header, "Content-Type")
		if ct == mediaJSON {
			return true
		}
		mt, _, err := mime.ParseMediaType(ct)
		return err == nil && mt == mediaJSON
	}
	return false
}

// request is one GraphQL request as it came, before gqlgen sees it.
type request struct {
	get        bool
	query      string
	opName     string
	variables  json.RawMessage // as sent: an object, null or nothing
	extensions map[string]any
}

// postBody is the POST body; typed so that a query, operation name,
// variables or extensions of the wrong JSON type is refused with 400.
type postBody struct {
	Query         string          `json:"query"`
	OperationName string          `json:"operationName"`
	Variables     json.RawMessage `json:"variables"`
	Extensions    json.RawMessage `json:"extensions"`
}

var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// errBadRequest marks what makes a request no GraphQL request: 400.
var errBadRequest = errors.New("bad GraphQL request")

// readRaw returns the request as sent: the body of a POST (in buf, a
// pooled buffer valid until putBuf(buf)) or a GET's query string (buf nil).
func readRaw(r *http.Request) (raw []byte, buf *bytes.Buffer, err error) {
	if r.Method == http.MethodGet {
		return []byte(r.URL.RawQuery), nil, nil
	}
	buf = bodyBufs.Get().(*bytes.Buffer)
	buf.Reset()
	if _, err := buf.ReadFrom(r.Body); err != nil {
		return nil, buf, badRequest("the request body could not be read: %v", err)
	}
	return buf.Bytes(), buf, nil
}

// putBuf gives readRaw's buffer back (nil: none was taken).
func putBuf(buf *bytes.Buffer) {
	if buf != nil {
		bodyBufs.Put(buf)
	}
}

// parseRequest decodes what readRaw returned.
func parseRequest(get bool, raw []byte) (*request, error) {
	req := &request{get: get}
	var ext json.RawMessage
	if get {
		q, err := url.ParseQuery(string(raw))
		if err != nil {
			return nil, badRequest("the URL's query string could not be decoded: %v", err)
		}
		req.query, req.opName = q.Get("query"), q.Get("operationName")
		if err := checkUTF8Params([2]string{"query", req.query}, [2]string{"operationName", req.opName},
			[2]string{"variables", q.Get("variables")}, [2]string{"extensions", q.Get("extensions")}); err != nil {
			return nil, err
		}
		if v := q.Get("variables"); v != "" {
			req.variables = json.RawMessage(v)
		}
		if e := q.Get("extensions"); e != "" {
			ext = json.RawMessage(e)
		}
	} else {
		var b postBody
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, badRequest("the body is not a GraphQL request in JSON: %v", err)
		}
		if err := checkUTF8Body(raw); err != nil {
			return nil, err
		}
		req.query, req.opName, req.variables, ext = b.Query, b.OperationName, b.Variables, b.Extensions
	}
	if !objectOrNull(req.variables) {
		return nil, badRequest("variables must be a JSON object")
	}
	if !objectOrNull(ext) {
		return nil, badRequest("extensions must be a JSON object")
	}
	if len(ext) > 0 && !isNull(ext) {
		if err := decodeNumbers(ext, &req.extensions); err != nil {
			return nil, badRequest("extensions could not be decoded: %v", err)
		}
	}
	if req.query == "" && req.extensions["persistedQuery"] == nil {
		return nil, badRequest("a GraphQL request needs a query (or a persisted query's hash in extensions.persistedQuery)")
	}
	return req, nil
}

func badRequest(format string, args ...any) error {
	return &requestError{gqlerror.Errorf(format, args...)}
}

type requestError struct{ e *gqlerror.Error }

func (e *requestError) Error() string { return e.e.Message }
func (e *requestError) Unwrap() error { return errBadRequest }

func objectOrNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || raw[0] == '{' || isNull(raw)
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// decodeNumbers decodes as gqlgen's transports do: numbers stay json.Number,
// so variable coercion sees what the client sent.
func decodeNumbers(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// cacheKey is the response cache's key of an anonymous request: the
// document's SHA-256 (the persisted-query hash when one is sent, checked
// against the query when both are), the operation name (length-prefixed,
// so that no name and variables can forge another pair) and the
// operation's coerced variables, vars, encoded as JSON (sorted keys). ""
// when the request cannot be served from the cache (a persisted-query
// extension gqlgen would refuse, a hash that does not match its query,
// variables that cannot be encoded).
//
// vars are what execution reads (graphql.OperationContext.Variables): the
// declared variables only, defaults filled in. A variable the operation
// does not declare is ignored by the executor, as the GraphQL
// specification's CoerceVariableValues ignores it, so it cannot change the
// answer and stays out of the key: a client sending a different 2 KB
// extra each time gets the one stored answer instead of a new entry per
// request. Refusing such requests would break clients that send
// one variables object to several operations.
func cacheKey(req *request, vars map[string]any) string {
	var doc [sha256.Size]byte
	if pq, ok := req.extensions["persistedQuery"].(map[string]any); ok {
		h, _ := pq["sha256Hash"].(string)
		v, _ := pq["version"].(json.Number)
		if v != "1" || len(h) != 2*sha256.Size || strings.ToLower(h) != h {
			return ""
		}
		if _, err := hex.Decode(doc[:], []byte(h)); err != nil {
			return ""
		}
		if req.query != "" && sha256.Sum256([]byte(req.query)) != doc {
			return ""
		}
	} else if req.extensions["persistedQuery"] != nil {
		return ""
	} else {
		doc = sha256.Sum256([]byte(req.query))
	}
	var b bytes.Buffer
	b.Grow(len(doc) + binary.MaxVarintLen64 + len(req.opName) + len(req.variables))
	b.Write(doc[:])
	b.Write(binary.AppendUvarint(nil, uint64(len(req.opName))))
	b.WriteString(req.opName)
	if len(vars) > 0 {
		// encoding/json sorts map keys: one encoding per set of values.
		if err := json.NewEncoder(&b).Encode(vars); err != nil {
			return ""
		}
	}
	return b.String()
}

// responseType picks the media type of the answer from Accept: the first
// of the two GraphQL media types listed (with a q above 0), application/json
// for */*, application/* and no Accept, and application/json when nothing
// listed is supported (the specification's legacy fallback).
func responseType(accept string) string {
	if accept == "" || accept == mediaJSON || accept == "*/*" {
		return mediaJSON
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if q, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
				continue // q=0: "not acceptable"
			}
		}
		switch mt {
		case mediaGraphQLResponse:
			return mediaGraphQLResponse
		case mediaJSON, "*/*", "application/*":
			return mediaJSON
		}
	}
	return mediaJSON
}

func (t *httpTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := time.Now()
	ctx := r.Context()
	media := responseType(header(r.Header, "Accept"))
	get := r.Method == http.MethodGet
	anonymous := header(r.Header, "Authorization") == ""
	var body []byte
	var err error
	var alias string
	aliased := false // the alias was known: its key's answer is not current
	if f := frontOf(r); f != nil {
		// cachedFront read the request and found no current answer by
		// its bytes (respcache.go, aliases).
		body, err, alias, aliased = f.raw, f.err, f.alias, f.aliased
	} else {
		var buf *bytes.Buffer
		body, buf, err = readRaw(r)
		defer putBuf(buf)
	}
	var req *request
	if err == nil {
		req, err = parseRequest(get, body)
	}
	if err != nil {
		var re *requestError
		errors.As(err, &re)
		t.countBypass()
		t.write(w, media, http.StatusBadRequest, nil, marshalResponse(exec.DispatchError(ctx, gqlerror.List{re.e})))
		return
	}
	raw := &graphql.RawParams{Query: req.query, OperationName: req.opName, Extensions: req.extensions, Headers: r.Header}
	raw.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	if len(req.variables) > 0 && !isNull(req.variables) {
		decode := decodeNumbers
		if !get {
			// Checked JSON already, by parseRequest's Unmarshal.
			decode = func(b []byte, _ any) error { return decodeVariables(b, &raw.Variables) }
		}
		if err := decode(req.variables, &raw.Variables); err != nil {
			t.countBypass()
			e := gqlerror.Errorf("variables could not be decoded: %v", err)
			t.write(w, media, http.StatusBadRequest, nil, marshalResponse(exec.DispatchError(ctx, gqlerror.List{e})))
			return
		}
	}
	// Looked up before parsing with the variables as sent: a request
	// without undeclared variables has the key it would have after
	// coercion (equal JSON values coerce alike, so a match is always the
	// right answer), and a hash-only persisted query is answered even where
	// it was never registered. Any other request gets a second look with
	// its coerced variables below.
	sentKey := ""
	if anonymous && t.cache != nil {
		sentKey = cacheKey(req, raw.Variables)
	}
	if sentKey != "" && !aliased {
		if a := t.cache.lookup(sentKey); a != nil {
			t.cache.alias(alias, a)
			t.hit(w, r, media, get, a, start)
			return
		}
	}
	oc, gerrs := exec.CreateOperationContext(ctx, raw)
	if gerrs != nil {
		// Refused before execution: no data entry.
		t.countBypass()
		status := http.StatusOK
		if media == mediaGraphQLResponse {
			status = http.StatusBadRequest
		}
		t.write(w, media, status, t.noStoreIfGet(req), marshalResponse(exec.DispatchError(graphql.WithOperationContext(ctx, oc), gerrs)))
		return
	}
	if req.get && oc.Operation.Operation != ast.Query {
		t.countBypass()
		w.Header()["Allow"] = hdrAllowPost
		e := refusal(errs.InvalidInput, "GET requests may only run queries; send a %s with POST", oc.Operation.Operation)
		t.write(w, media, http.StatusMethodNotAllowed, nil, marshalResponse(&graphql.Response{Errors: gqlerror.List{e}}))
		return
	}

	if t.limit != nil {
		if wait, refused := t.limit.admit(r, oc.Operation, oc.Doc.Fragments); refused {
			t.rateLimited(graphql.WithOperationContext(ctx, oc), w, media, wait, exec)
			return
		}
	}

	// The stored key is made from the coerced variables (cacheKey says
	// why), so undeclared ones and omitted defaults share one entry.
	key := ""
	if sentKey != "" && oc.Operation.Operation == ast.Query {
		key = cacheKey(req, oc.Variables)
	}
	if key != "" && key != sentKey && !aliased {
		if a := t.cache.lookup(key); a != nil {
			t.cache.alias(alias, a)
			t.hit(w, r, media, get, a, start)
			return
		}
	}
	cacheable := key != "" && cacheableOp(oc.Operation, oc.Doc.Fragments)
	var reads *catalog.ReadSet
	if cacheable {
		t.cache.misses.Add(1)
		ctx, reads = catalog.WithReadSet(ctx)
	} else {
		t.countBypass()
	}
	responses, ctx := exec.DispatchOperation(ctx, oc)
	resp := responses(ctx)
	if r.Context().Err() != nil {
		// The client went away: nobody reads the answer, and it is no error
		// of ours (disconnect.go).
		t.gone.count(r.Context(), "during execution")
		return
	}
	if resp == nil {
		resp = &graphql.Response{Data: json.RawMessage("null")}
	}
	answer := marshalResponse(resp)
	if src, ok := t.sources(cacheable, resp, reads); ok {
		op := rootField(oc.Operation.SelectionSet, oc.Doc.Fragments)
		a := t.cache.store(key, answer, src, opCounters{
			requests: t.m.Requests.WithLabelValues(op, "ok"),
			latency:  t.m.Latency.WithLabelValues(op, "ok"),
		})
		t.cache.alias(alias, a)
		t.serveAnswer(w, r, media, req.get, a)
		return
	}
	status := http.StatusOK
	if resp.Data == nil && media == mediaGraphQLResponse {
		status = http.StatusBadRequest
	}
	t.write(w, media, status, t.noStoreIfGet(req), answer)
}

// rateLimited refuses a mutation over its client's limit before it runs:
// HTTP 429 with Retry-After (the whole seconds until the bucket has the
// tokens), the code RATE_LIMITED and no data entry.
func (t *httpTransport) rateLimited(ctx context.Context, w http.ResponseWriter, media string, wait time.Duration, exec graphql.GraphExecutor) {
	t.countBypass()
	after := retryAfter(wait)
	w.Header()["Retry-After"] = []string{after}
	err := fmt.Errorf("%w: too many writes from this client; retry after %s s", errs.RateLimited, after)
	t.write(w, media, http.StatusTooManyRequests, nil, marshalResponse(exec.DispatchError(ctx, gqlerror.List{gqlerror.WrapIfUnwrapped(err)})))
}

// hit answers with a stored answer: no execution, no database.
func (t *httpTransport) hit(w http.ResponseWriter, r *http.Request, media string, get bool, a *cachedAnswer, start time.Time) {
	t.cache.hits.Add(1)
	t.serveAnswer(w, r, media, get, a)
	a.requests.Inc()
	a.latency.Observe(time.Since(start).Seconds())
}

// sources is what a cacheable answer was built from, if it may be stored:
// no errors (a response with errors is not cached), and every read recorded.
func (t *httpTransport) sources(cacheable bool, resp *graphql.Response, reads *catalog.ReadSet) (*catalog.Sources, bool) {
	if !cacheable || len(resp.Errors) > 0 || resp.Data == nil {
		return nil, false
	}
	return reads.Sources()
}

// serveAnswer writes a cacheable answer: over GET with its ETag and
// Cache-Control (a 304 without body when If-None-Match names the tag),
// over POST as any answer.
func (t *httpTransport) serveAnswer(w http.ResponseWriter, r *http.Request, media string, get bool, a *cachedAnswer) {
	h := w.Header()
	if get {
		h["Etag"] = a.etag
		h["Cache-Control"] = t.cache.maxAge
		h["Vary"] = hdrVary
		if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatch(inm, a.etag[0]) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	if media == mediaGraphQLResponse {
		h["Content-Type"] = hdrGraphQLResponse
	} else {
		h["Content-Type"] = hdrJSON
	}
	h["Content-Length"] = a.length
	_, _ = w.Write(a.body)
}

// noStoreIfGet keeps shared caches from storing an anonymous GET's answer
// that is not cacheable (an error, a refused persisted query, a field not
// declared cacheable). Token requests get "private, no-store" from
// privateNoStore already.
func (t *httpTransport) noStoreIfGet(req *request) []string {
	if req.get {
		return hdrNoStore
	}
	return nil
}

func (t *httpTransport) write(w http.ResponseWriter, media string, status int, cacheControl []string, body []byte) {
	h := w.Header()
	if media == mediaGraphQLResponse {
		h["Content-Type"] = hdrGraphQLResponse
	} else {
		h["Content-Type"] = hdrJSON
	}
	if cacheControl != nil && h.Get("Cache-Control") == "" {
		h["Cache-Control"] = cacheControl
	}
	// The whole body is at hand: no chunked encoding for large answers.
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	if status != http.StatusOK {
		w.WriteHeader(status)
	}
	_, _ = w.Write(body)
}

func (t *httpTransport) countBypass() {
	if t.cache != nil {
		t.cache.bypasses.Add(1)
	}
}

// marshalResponse is gqlgen's encoding of a response, except that a
// response refused before execution (no Data) has no data entry at all, as
// the GraphQL specification says ("data": null would claim that execution
// ran and failed at the root).
func marshalResponse(resp *graphql.Response) []byte {
	if b, ok := appendDataOnly(resp); ok {
		return b
	}
	var b []byte
	var err error
	if resp.Data == nil {
		b, err = json.Marshal(struct {
			Errors     gqlerror.List  `json:"errors,omitempty"`
			Extensions map[string]any `json:"extensions,omitempty"`
		}{resp.Errors, resp.Extensions})
	} else {
		b, err = json.Marshal(resp)
	}
	if err != nil {
		// Only an unencodable extension value could cause it: a bug.
		slog.Error("encoding a GraphQL response", "err", err)
		return []byte(`{"errors":[{"message":"internal error","extensions":{"code":"` + resolvers.CodeInternal + `"}}]}`)
	}
	return b
}

// etagMatch is If-None-Match's weak comparison (RFC 9110, 13.1.2): "*" or
// any listed tag whose opaque part equals tag's.
func etagMatch(header, tag string) bool {
	tag = strings.TrimPrefix(tag, "W/")
	for part := range strings.SplitSeq(header, ",") {
		part = strings.TrimSpace(part)
		if part == "*" || strings.TrimPrefix(part, "W/") == tag {
			return true
		}
	}
	return false
}

// privateNoStore marks every answer to a request with a token private and
// not to be stored by any cache, whatever produced it (GraphQL, 413, 400).
func privateNoStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			w.Header()["Cache-Control"] = []string{"private, no-store"}
		}
		next.ServeHTTP(w, r)
	})
}
