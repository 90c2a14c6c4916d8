package server

import (
	"encoding/json"
	"reflect"
	"testing"
)

// decodeVariables must decode what decodeNumbers decodes, value for value
// and type for type, for any variables object a POST body can carry.
func TestDecodeVariablesAsDecodeNumbers(t *testing.T) {
	for _, raw := range []string{
		`{"id":"3"}`,
		`{}`,
		`null`,
		`{ "a" : 1 , "b":"x" , "c" : -2.50e3 }`,
		`{"n":12345678901234567890,"f":0.1,"z":-0}`,
		`{"t":true,"f":false,"n":null}`,
		`{"s":"\u00e9\"\\\/\n","bad":"\ud800"}`,
		`{"o":{"k":[1,"2",{"x":3.0}],"e":{}},"l":[],"m":[null,true]}`,
		`{"dup":1,"dup":"two"}`,
		`{"input":{"items":[{"itemId":"7","quantity":1}],"remark":"黑色 <b>&"}}`,
		`{ }`,
		"{\n\t\"a\"\t:\r\n7 ,\"b\":\"\"}",
		`{"a":1 }`,
		`{"黑色":"L","k":"é"}`,
		`{"a":"x","b":[1]}`,
	} {
		var want, got map[string]any
		if err := decodeNumbers([]byte(raw), &want); err != nil {
			t.Fatalf("decodeNumbers(%s): %v", raw, err)
		}
		if err := decodeVariables([]byte(raw), &got); err != nil {
			t.Fatalf("decodeVariables(%s): %v", raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("decodeVariables(%s) = %#v, want %#v", raw, got, want)
		}
	}
}

// Any object that parses as JSON decodes alike both ways.
func FuzzDecodeVariables(f *testing.F) {
	for _, s := range []string{`{"id":"3"}`, `{"a":1,"b":true,"c":null}`, `{"a":{"b":[1]}}`, `{ "x" : -1.5e2 }`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var probe map[string]json.RawMessage
		if json.Unmarshal([]byte(raw), &probe) != nil || probe == nil {
			return // decodeVariables is only given a valid object
		}
		var want, got map[string]any
		errWant := decodeNumbers([]byte(raw), &want)
		errGot := decodeVariables([]byte(raw), &got)
		if (errWant == nil) != (errGot == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("decodeVariables(%q) = %#v, %v; decodeNumbers: %#v, %v", raw, got, errGot, want, errWant)
		}
	})
}

func BenchmarkDecodeVariables(b *testing.B) {
	raw := json.RawMessage(`{"id":"3"}`)
	b.Run("decodeVariables", func(b *testing.B) {
		for b.Loop() {
			var v map[string]any
			_ = decodeVariables(raw, &v)
		}
	})
	b.Run("decodeNumbers", func(b *testing.B) {
		for b.Loop() {
			var v map[string]any
			_ = decodeNumbers(raw, &v)
		}
	})
}

// A string with an escape is decoded, never taken as its bytes: the
// shortcut (flatObject) must hand it to the decoder. An object whose every
// string is otherwise plain is where the shortcut would take it.
func TestDecodeVariablesEscapes(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want string
	}{
		{`{"s":"a\nb"}`, "a\nb"},
		{`{"s":"x\/y"}`, "x/y"},
		{`{"s":"tab\there"}`, "tab\there"},
		{`{"s":"q\"q"}`, `q"q`},
		{`{"s":"\u0041"}`, "A"},
		{`{"s":"back\\slash"}`, `back\slash`},
	} {
		var got map[string]any
		if err := decodeVariables([]byte(tc.raw), &got); err != nil {
			t.Fatalf("decodeVariables(%s): %v", tc.raw, err)
		}
		if got["s"] != tc.want {
			t.Errorf("decodeVariables(%s)[s] = %q, want %q", tc.raw, got["s"], tc.want)
		}
	}
}
