package server

import (
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// shape is what the limits need to know of a selection set: how deep it
// nests, how many aliases it uses and what it may cost.
type shape struct{ depth, aliases, cost int }

// analysis walks one operation once. A fragment is walked once per page
// size it is spread under and its shape reused wherever else it is
// spread: walking it at every spread (as gqlgen's complexity.Calculate
// does) takes time exponential in fragment nesting, so a few kilobytes of
// fragments spreading fragments could busy a core before any limit said no.
type analysis struct {
	vars  map[string]any
	frags ast.FragmentDefinitionList
	memo  map[fragKey]shape
	// open guards against fragment cycles even though validation rejects
	// them first.
	open map[string]bool
}

type fragKey struct {
	name string
	page int
}

func analyze(op *ast.OperationDefinition, doc *ast.QueryDocument, vars map[string]any) shape {
	a := &analysis{vars: vars, frags: doc.Fragments, memo: map[fragKey]shape{}, open: map[string]bool{}}
	return a.set(op.SelectionSet, 0)
}

// set is the shape of a selection set; page is the page size of the
// connection it is inside (what its edges can return).
//
// Cost: a field costs 1 plus its selection; a list field costs 1 plus, for
// each item it can return (listBound), its selection or at least 1. Every
// occurrence counts, even where gqlgen would merge two identical fields:
// an estimate that errs on the high side.
//
// Depth counts nested fields. Introspection subtrees (__schema, __type)
// count as one field: the standard introspection query nests ofType nine
// levels deep, and whether introspection is allowed at all is its own
// setting.
func (a *analysis) set(set ast.SelectionSet, page int) shape {
	var s shape
	for _, sel := range set {
		var c shape
		switch f := sel.(type) {
		case *ast.Field:
			c = a.field(f, page)
		case *ast.InlineFragment:
			c = a.set(f.SelectionSet, page)
		case *ast.FragmentSpread:
			c = a.fragment(f.Name, page)
		}
		s.depth = max(s.depth, c.depth)
		s.aliases = add(s.aliases, c.aliases)
		s.cost = add(s.cost, c.cost)
	}
	return s
}

func (a *analysis) field(f *ast.Field, page int) shape {
	var s shape
	if f.Alias != "" && f.Alias != f.Name {
		s.aliases = 1
	}
	if strings.HasPrefix(f.Name, "__") || f.ObjectDefinition == nil {
		s.depth, s.cost = 1, 1
		return s
	}
	coord := f.ObjectDefinition.Name + "." + f.Name
	var args map[string]any
	if needsArgs(coord) {
		args = f.ArgumentMap(a.vars)
	}
	if size, ok := connections[coord]; ok {
		page = size(args)
	}
	c := a.set(f.SelectionSet, page)
	s.depth = 1 + c.depth
	s.aliases = add(s.aliases, c.aliases)
	if bound, ok := lists[coord]; ok {
		s.cost = add(1, mul(bound(args, page), max(c.cost, 1)))
	} else {
		s.cost = add(1, c.cost)
	}
	return s
}

func (a *analysis) fragment(name string, page int) shape {
	k := fragKey{name, page}
	if s, ok := a.memo[k]; ok {
		return s
	}
	def := a.frags.ForName(name)
	if def == nil || a.open[name] {
		return shape{}
	}
	a.open[name] = true
	s := a.set(def.SelectionSet, page)
	delete(a.open, name)
	a.memo[k] = s
	return s
}

// costCap keeps sums and products far from overflow: anything near it is
// over every limit anyway.
const costCap = 1 << 40

func add(x, y int) int { return min(x+y, costCap) }

func mul(x, y int) int {
	if x != 0 && y > costCap/x {
		return costCap
	}
	return x * y
}
