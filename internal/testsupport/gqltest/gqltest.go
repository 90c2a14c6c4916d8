// Package gqltest is test support: it sends one GraphQL request through a
// handler in process, as a client would over HTTP, and reads the answer.
package gqltest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Answer is a GraphQL response: each root field's data, and the errors.
type Answer struct {
	Data   map[string]json.RawMessage
	Errors []struct {
		Message    string
		Path       []any
		Extensions struct {
			Code  string
			Field string
		}
	}
}

// Code is the first error's extensions.code, or "" without errors.
func (a Answer) Code() string {
	if len(a.Errors) == 0 {
		return ""
	}
	return a.Errors[0].Extensions.Code
}

// Do POSTs query with vars to h's /graphql, signed in with token ("":
// anonymous), and fails the test when the answer is not GraphQL JSON.
func Do(t testing.TB, h http.Handler, token, query string, vars map[string]any) Answer {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var a Answer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body.Bytes(), err)
	}
	return a
}
