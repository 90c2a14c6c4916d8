package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"storefront/internal/catalog"
)

// cachedFront answers the bytes it has seen with the stored answer as the
// transport would: the media type the request's Accept asks for, its
// X-Request-Id, a hit counted; and its alias is the same for a body longer
// than a raw alias (the SHA-256 one). A chunked body, which it leaves to the
// chain, is still answered from the cache by its key, and a body with a
// token is never answered by it.
func TestCachedFrontAnswersAsTheTransport(t *testing.T) {
	eachCached(t, catalog.DefaultConfig(), func(t *testing.T, f *rcFixture) {
		short, _ := json.Marshal(map[string]any{"query": rcPage, "variables": map[string]any{"id": f.shirt}})
		// Undeclared variables change neither the key nor the answer.
		long, _ := json.Marshal(map[string]any{"query": rcPage, "variables": map[string]any{"id": f.shirt, "pad": strings.Repeat("x", maxRawAlias)}})
		if len(short) > maxRawAlias || len(long) <= maxRawAlias {
			t.Fatalf("bodies of %d and %d bytes: want one each side of %d", len(short), len(long), maxRawAlias)
		}
		post := func(body []byte, hdr ...string) answer {
			r := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			for i := 0; i+1 < len(hdr); i += 2 {
				r.Header.Set(hdr[i], hdr[i+1])
			}
			return f.serve(r)
		}
		first := post(short)
		first.data(t)
		post(long).data(t)
		f.rc.Wait()
		for _, tc := range []struct {
			name  string
			body  []byte
			hdr   []string
			media string
		}{
			{"short", short, nil, mediaJSON},
			{"long", long, nil, mediaJSON},
			{"graphql-response", short, []string{"Accept", mediaGraphQLResponse}, mediaGraphQLResponse},
			{"client id", short, []string{"X-Request-Id", "front-42"}, mediaJSON},
		} {
			hits := f.rc.hits.Load()
			a := post(tc.body, tc.hdr...)
			if a.body() != first.body() || a.statements != 0 || f.rc.hits.Load() != hits+1 {
				t.Errorf("%s: %d statements, %d hits, same bytes %v", tc.name, a.statements, f.rc.hits.Load()-hits, a.body() == first.body())
			}
			if got := a.Header().Get("Content-Type"); got != tc.media {
				t.Errorf("%s: Content-Type %q, want %q", tc.name, got, tc.media)
			}
			if id := a.Header().Get("X-Request-Id"); id == "" || len(tc.hdr) == 2 && tc.hdr[0] == "X-Request-Id" && id != tc.hdr[1] {
				t.Errorf("%s: X-Request-Id %q", tc.name, id)
			}
		}

		// Chunked: no Content-Length, so the chain's body limit reads it.
		var hits uint64
		r := httptest.NewRequest(http.MethodPost, "/graphql", io.MultiReader(bytes.NewReader(short)))
		r.Header.Set("Content-Type", "application/json")
		r.ContentLength = -1
		hits = f.rc.hits.Load()
		if a := f.serve(r); a.body() != first.body() || a.statements != 0 || f.rc.hits.Load() != hits+1 {
			t.Errorf("chunked: %d statements, %d hits, %.80s", a.statements, f.rc.hits.Load()-hits, a.body())
		}

		// A token: the same bytes are executed for the customer, privately.
		hits, bypasses := f.rc.hits.Load(), f.rc.bypasses.Load()
		a := post(short, "Authorization", "Bearer "+f.customer)
		a.data(t)
		if f.rc.hits.Load() != hits || f.rc.bypasses.Load() != bypasses+1 || a.Header().Get("Cache-Control") != "private, no-store" {
			t.Errorf("with a token: %d hits, %d bypasses, Cache-Control %q", f.rc.hits.Load()-hits, f.rc.bypasses.Load()-bypasses, a.Header().Get("Cache-Control"))
		}
	})
}

// After an edit, the same bytes are executed once more and then answered
// with the new answer from the cache: the alias follows the answer its key
// now has, and never leads back to the old one.
func TestAliasFollowsTheNewAnswer(t *testing.T) {
	eachCached(t, catalog.DefaultConfig(), func(t *testing.T, f *rcFixture) {
		vars := map[string]any{"id": f.shirt}
		page := func() answer { return f.post(t, "", rcPage, vars) }
		old := page()
		sku := old.data(t)["goods"].(map[string]any)["skus"].([]any)[0].(map[string]any)
		f.rc.Wait()
		upd := `mutation($in: UpdateSkuInput!) { updateSku(input: $in) { sellPrice } }`
		f.post(t, f.admin, upd, map[string]any{"in": map[string]any{"itemId": sku["id"], "expectedVersion": sku["version"], "sellPrice": "4.56"}}).data(t)
		fresh := page()
		if fresh.body() == old.body() || !strings.Contains(fresh.body(), `"4.56"`) {
			t.Fatalf("after updateSku: %.120s", fresh.body())
		}
		f.rc.Wait()
		body, _ := json.Marshal(map[string]any{"query": rcPage, "variables": vars}) // as post sends it
		if e, ok := f.rc.rc.Get(aliasKey(false, body)); !ok || e.target.Value() == nil || string(e.target.Value().body) != fresh.body() {
			t.Errorf("the alias does not lead to the new answer (found %v)", ok)
		}
		for i := range 3 {
			hits := f.rc.hits.Load()
			if a := page(); a.body() != fresh.body() || a.statements != 0 || f.rc.hits.Load() != hits+1 {
				t.Fatalf("request %d after the edit: %d statements, a hit %v, the new answer %v", i, a.statements, f.rc.hits.Load() == hits+1, a.body() == fresh.body())
			}
		}
	})
}
