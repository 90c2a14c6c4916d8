package e2e

import (
	"context"
	"strings"
	"testing"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// A loop in the category tree written by hand, against the real binary:
// reading the path and moving a category into the loop answer INTERNAL
// and the server lives on (a move once recursed without end: fatal error:
// stack overflow, every request in flight lost); `storefront reconcile`
// reports the loop and exits 1; updateCategory(toRoot) repairs it.
func TestCategoryLoopWrittenByHand(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			spec := testdb.Spec(t, b)
			s := Start(t, spec)
			defer s.Stop(t)
			create := `mutation($in: CreateCategoryInput!) { createCategory(input: $in) { id } }`
			update := `mutation($in: UpdateCategoryInput!) { updateCategory(input: $in) { id path { id } } }`
			type id struct{ ID string }
			a := must[id](t, s.Query(t, s.AdminToken, create, map[string]any{"in": map[string]any{"name": "Loop A"}}), "createCategory")
			bb := must[id](t, s.Query(t, s.AdminToken, create, map[string]any{"in": map[string]any{"name": "Loop B", "parentId": a.ID}}), "createCategory")
			other := must[id](t, s.Query(t, s.AdminToken, create, map[string]any{"in": map[string]any{"name": "Loop other"}}), "createCategory")

			db, err := store.Open(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.SQL.Exec("UPDATE category SET parent_id = ? WHERE id = ?", bb.ID, a.ID); err != nil {
				t.Fatal(err)
			}
			// An edit through the server drops its kept tree: it reads the loop.
			must[id](t, s.Query(t, s.AdminToken, update, map[string]any{"in": map[string]any{"categoryId": other.ID, "name": "Loop other 2"}}), "updateCategory")

			path := `query($id: ID!) { category(id: $id) { id path { id } } }`
			wantCode(t, "the path of B in the loop", s.Query(t, "", path, map[string]any{"id": bb.ID}), "INTERNAL")
			wantCode(t, "a move of Other under B", s.Query(t, s.AdminToken, update, map[string]any{"in": map[string]any{"categoryId": other.ID, "parentId": bb.ID}}), "INTERNAL")
			wantCode(t, "a create under A", s.Query(t, s.AdminToken, create, map[string]any{"in": map[string]any{"name": "Loop C", "parentId": a.ID}}), "INTERNAL")
			if r := s.Query(t, "", `{ categories { id } }`, nil); len(r.Errors) > 0 {
				t.Errorf("the roots while the loop is there: %+v", r.Errors)
			}

			out, clean := reconcileCLI(t, spec)
			if clean || !strings.Contains(out, "categories "+a.ID+" › "+bb.ID+" › "+a.ID+" form a loop") {
				t.Errorf("storefront reconcile with a loop: exit 0 %v, want 1 and the loop of %s and %s named:\n%s", clean, a.ID, bb.ID, out)
			}

			type moved struct {
				Path []id
			}
			m := must[moved](t, s.Query(t, s.AdminToken, update, map[string]any{"in": map[string]any{"categoryId": a.ID, "toRoot": true}}), "updateCategory")
			if len(m.Path) != 1 || m.Path[0].ID != a.ID {
				t.Errorf("A's path after the repair %+v, want A alone", m.Path)
			}
			p := must[moved](t, s.Query(t, "", path, map[string]any{"id": bb.ID}), "category")
			if len(p.Path) != 2 || p.Path[0].ID != a.ID || p.Path[1].ID != bb.ID {
				t.Errorf("B's path after the repair %+v, want A › B", p.Path)
			}
			if out, clean := reconcileCLI(t, spec); !clean {
				t.Errorf("storefront reconcile after the repair:\n%s", out)
			}
		})
	}
}
