package server

import (
	"encoding/json"
	"unicode/utf8"
)

// decodeVariables decodes a POST body's variables as decodeNumbers does
// (numbers stay json.Number), without json.Decoder's reader, buffer and
// second scan when they are flat: an object whose values are strings
// without escapes, numbers, booleans or null, as most operations' ids and
// counts are. Anything else (an escape, a byte past ASCII, a nested object
// or list) goes to decodeNumbers, whose reader and second scan were a
// visible share of every placeOrder's CPU (docs/benchmarks.md, "CPU per
// order").
//
// raw must be one valid JSON value, as postBody.Variables is after
// parseRequest's json.Unmarshal; a GET's variables come unchecked from the
// URL and go to decodeNumbers, which also ignores what follows the first
// value.
func decodeVariables(raw []byte, v *map[string]any) error {
	if m, ok := flatObject(raw); ok {
		*v = m
		return nil
	}
	return decodeNumbers(raw, v)
}

// flatObject is decodeVariables' shortcut; ok is false where it does not
// apply. It trusts raw to be valid JSON.
func flatObject(raw []byte) (m map[string]any, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	m = map[string]any{}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return m, skipSpace(raw, i+1) == len(raw)
	}
	for i < len(raw) {
		key, j, ok := plainString(raw, i)
		if !ok {
			return nil, false
		}
		i = skipSpace(raw, j)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		i = skipSpace(raw, i+1)
		if i >= len(raw) {
			return nil, false
		}
		var val any
		switch c := raw[i]; {
		case c == '"':
			s, j, ok := plainString(raw, i)
			if !ok {
				return nil, false
			}
			val, i = s, j
		case c == 't' && len(raw)-i >= 4 && string(raw[i:i+4]) == "true":
			val, i = true, i+4
		case c == 'f' && len(raw)-i >= 5 && string(raw[i:i+5]) == "false":
			val, i = false, i+5
		case c == 'n' && len(raw)-i >= 4 && string(raw[i:i+4]) == "null":
			val, i = nil, i+4
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(raw) && (raw[j] >= '0' && raw[j] <= '9' || raw[j] == '.' || raw[j] == 'e' || raw[j] == 'E' || raw[j] == '+' || raw[j] == '-') {
				j++
			}
			val, i = json.Number(raw[i:j]), j
		default:
			return nil, false // an object or a list
		}
		m[key] = val
		i = skipSpace(raw, i)
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return m, skipSpace(raw, i+1) == len(raw)
		default:
			return nil, false
		}
	}
	return nil, false
}

// plainString reads the string starting at raw[i] (a quote) when it has no
// escape and only ASCII (utf8.RuneSelf), so its bytes are its value; j is
// just past its closing quote.
func plainString(raw []byte, i int) (s string, j int, ok bool) {
	if i >= len(raw) || raw[i] != '"' {
		return "", 0, false
	}
	for j = i + 1; j < len(raw); j++ {
		switch c := raw[j]; {
		case c == '"':
			return string(raw[i+1 : j]), j + 1, true
		case c == '\\' || c >= utf8.RuneSelf || c < 0x20:
			return "", 0, false
		}
	}
	return "", 0, false
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}
