package server

import (
	"github.com/99designs/gqlgen/graphql"
)

// appendDataOnly writes the answer of a response that has data and nothing
// else ({"data":…}) without encoding/json, which would reflect over
// graphql.Response and re-scan the data to compact and HTML-escape it: a
// few microseconds of every mutation's CPU (docs/benchmarks.md, "CPU per
// order"). ok is false, and the caller encodes as before, whenever the
// bytes could differ from json.Marshal's: any other field is set, or the
// data holds whitespace outside strings, or a byte json.Marshal escapes
// (<, >, & and U+2028/U+2029, whose UTF-8 starts with 0xE2).
func appendDataOnly(resp *graphql.Response) (b []byte, ok bool) {
	if len(resp.Errors) > 0 || len(resp.Extensions) > 0 || resp.Label != "" || resp.Path != nil || resp.HasNext != nil || !compactSafe(resp.Data) {
		return nil, false
	}
	b = make([]byte, 0, len(`{"data":}`)+len(resp.Data))
	b = append(b, `{"data":`...)
	b = append(b, resp.Data...)
	return append(b, '}'), true
}

// compactSafe says whether json.Marshal would copy data as it is: no
// whitespace outside strings and no byte it escapes. gqlgen's marshalling
// writes data compact, so the check fails only where a string holds <, >,
// & or a non-ASCII character starting with 0xE2.
func compactSafe(data []byte) bool {
	if len(data) == 0 {
		return false
	}
	in, esc := false, false
	for _, c := range data {
		switch {
		case c == '<' || c == '>' || c == '&' || c == 0xE2:
			return false
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return !in
}
