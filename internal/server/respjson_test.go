package server

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// marshalResponse's shortcut must give json.Marshal's bytes exactly.
func TestMarshalResponseAsEncodingJSON(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name string
		resp *graphql.Response
		fast bool // the shortcut is expected to take it
	}{
		{"order", &graphql.Response{Data: json.RawMessage(`{"placeOrder":{"orderSn":"2026120100001","amount":"89.00"}}`)}, true},
		{"null data", &graphql.Response{Data: json.RawMessage(`null`)}, true},
		{"escaped quote and backslash", &graphql.Response{Data: json.RawMessage(`{"a":"x\"y\\","b":[1,2.5,true,null]}`)}, true},
		{"space in a string", &graphql.Response{Data: json.RawMessage(`{"name":"T-shirt 黑色"}`)}, true},
		{"space outside strings", &graphql.Response{Data: json.RawMessage(`{"a": 1}`)}, false},
		{"newline outside strings", &graphql.Response{Data: json.RawMessage("{\"a\":\n1}")}, false},
		{"less than", &graphql.Response{Data: json.RawMessage(`{"a":"1<2"}`)}, false},
		{"greater than", &graphql.Response{Data: json.RawMessage(`{"a":"2>1"}`)}, false},
		{"ampersand", &graphql.Response{Data: json.RawMessage(`{"a":"A&B"}`)}, false},
		{"line separator", &graphql.Response{Data: json.RawMessage("{\"a\":\"x\u2028y\"}")}, false},
		{"errors", &graphql.Response{Data: json.RawMessage(`null`), Errors: gqlerror.List{gqlerror.Errorf("no")}}, false},
		{"extensions", &graphql.Response{Data: json.RawMessage(`{}`), Extensions: map[string]any{"k": 1}}, false},
		{"hasNext", &graphql.Response{Data: json.RawMessage(`{}`), HasNext: &yes}, false},
		{"label", &graphql.Response{Data: json.RawMessage(`{}`), Label: "l"}, false},
		{"path", &graphql.Response{Data: json.RawMessage(`{}`), Path: ast.Path{ast.PathName("a")}}, false},
	} {
		want, err := json.Marshal(tc.resp)
		if err != nil {
			t.Fatalf("%s: json.Marshal: %v", tc.name, err)
		}
		if got := marshalResponse(tc.resp); !bytes.Equal(got, want) {
			t.Errorf("%s: marshalResponse = %s, want %s", tc.name, got, want)
		}
		if _, fast := appendDataOnly(tc.resp); fast != tc.fast {
			t.Errorf("%s: appendDataOnly took it: %v, want %v", tc.name, fast, tc.fast)
		}
	}
}

func BenchmarkMarshalResponse(b *testing.B) {
	resp := &graphql.Response{Data: json.RawMessage(`{"placeOrder":{"orderSn":"2026120100001","amount":"89.00"}}`)}
	b.Run("shortcut", func(b *testing.B) {
		for b.Loop() {
			marshalResponse(resp)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(resp)
		}
	})
}
