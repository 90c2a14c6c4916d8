package server

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"storefront/internal/vocab/input"
)

// A request's text must be UTF-8 (RFC 8259 requires it of JSON). encoding/json
// would quietly turn each byte that is not into U+FFFD, so a key or a name
// sent with one would be stored as another string than the one sent; such a
// request is refused whole with INVALID_INPUT instead, naming where the byte
// is when the body is otherwise JSON.

// checkUTF8Body refuses a POST body that is not UTF-8. utf8.Valid reads
// ASCII eight bytes at a time: a product page's body costs tens of
// nanoseconds.
func checkUTF8Body(raw []byte) error {
	if utf8.Valid(raw) {
		return nil
	}
	return notUTF8(utf8Path(raw))
}

// checkUTF8Params refuses a GET whose decoded parameters are not UTF-8
// (%E9 in the URL is a byte, not a character).
func checkUTF8Params(params ...[2]string) error {
	for _, p := range params {
		if !utf8.ValidString(p[1]) {
			field := p[0]
			if p[0] == "variables" {
				field = utf8Path([]byte(p[1]))
				if field == "" {
					field = "variables"
				} else {
					field = "variables." + field
				}
			}
			return notUTF8(field)
		}
	}
	return nil
}

func notUTF8(field string) error {
	if field == "" {
		field = "request body"
	}
	e := gqlerror.Errorf("%s", (&input.Error{Field: field, Reason: "is not valid UTF-8"}).Error())
	e.Extensions = map[string]any{"code": codeInvalidInput, "field": field}
	return &requestError{e}
}

// utf8Path is the path (variables.input.skus[0].skuCode, query) of the
// first JSON string in raw that is not UTF-8, or "" when raw is not JSON
// up to it. It runs only for a refused request.
func utf8Path(raw []byte) string {
	type frame struct {
		array bool
		key   string
		index int
		atKey bool // in an object, the next string is a key
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var stack []frame
	path := func() string {
		var b []byte
		for i, f := range stack {
			if f.array {
				b = append(append(append(b, '['), strconv.Itoa(f.index)...), ']')
				continue
			}
			if i > 0 {
				b = append(b, '.')
			}
			b = append(b, f.key...)
		}
		return string(b)
	}
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil { // the end, or not JSON up to here
			return ""
		}
		end := dec.InputOffset()
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			if top != nil && top.array && (v == '{' || v == '[') {
				top.index++
			}
			switch v {
			case '{':
				stack = append(stack, frame{atKey: true})
			case '[':
				stack = append(stack, frame{array: true, index: -1})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && !stack[len(stack)-1].array {
					stack[len(stack)-1].atKey = true
				}
			}
			continue
		case string:
			if top != nil && !top.array && top.atKey {
				if !utf8.Valid(raw[start:end]) {
					return path() + ".(a key)"
				}
				top.key, top.atKey = v, false
				continue
			}
			if top != nil && top.array {
				top.index++
			}
			if !utf8.Valid(raw[start:end]) {
				return path()
			}
		default:
			if top != nil && top.array {
				top.index++
			}
		}
		if top != nil && !top.array {
			top.atKey = true
		}
	}
}
