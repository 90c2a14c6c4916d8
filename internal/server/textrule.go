package server

import (
	"context"
	"errors"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"storefront/internal/vocab/input"
)

// textRule applies package input's rule to every string a GraphQL
// operation carries, inline or in a variable, before any resolver runs: one
// walk of the operation's arguments against the schema, after validation
// and variable coercion. Every scalar argument and input field whose value
// is a string is checked (String, ID, Money, Time and any scalar added
// later), under the rule its @text directive declares or input.Default; a
// field added to the schema is covered without a line here. A refusal is
// INVALID_INPUT naming the field (createGoods.input.skus[1].skuCode) and
// changes nothing.
//
// It also refuses an operation that came with an Idempotency-Key header the
// key rule refuses (idempotencyKey in server.go leaves the verdict in the
// context): the header enters beside the operation, and is answered as
// its arguments are.
type textRule struct {
	schema *ast.Schema
	// rules are the fields that declare @text; the others follow
	// input.Default. Built once from the schema, read-only after.
	args   map[*ast.ArgumentDefinition]input.Rule
	fields map[*ast.FieldDefinition]input.Rule
}

var _ interface {
	graphql.OperationContextMutator
	graphql.HandlerExtension
} = &textRule{}

func (*textRule) ExtensionName() string { return "TextRule" }

// Validate reads the @text declarations of the schema the handler serves.
func (x *textRule) Validate(es graphql.ExecutableSchema) error {
	x.schema = es.Schema()
	x.args = map[*ast.ArgumentDefinition]input.Rule{}
	x.fields = map[*ast.FieldDefinition]input.Rule{}
	for _, def := range x.schema.Types {
		for _, f := range def.Fields {
			if r, ok := declaredRule(f.Directives); ok {
				x.fields[f] = r
			}
			for _, a := range f.Arguments {
				if r, ok := declaredRule(a.Directives); ok {
					x.args[a] = r
				}
			}
		}
	}
	return nil
}

// declaredRule reads a field's @text(max:, lines:, bytes:).
func declaredRule(ds ast.DirectiveList) (input.Rule, bool) {
	d := ds.ForName("text")
	if d == nil {
		return input.Rule{}, false
	}
	r := input.Rule{Max: input.DefaultMax}
	for _, a := range d.Arguments {
		switch a.Name {
		case "max":
			if n, err := strconv.Atoi(a.Value.Raw); err == nil {
				r.Max = n
			}
		case "lines":
			r.Lines = a.Value.Raw == "true"
		case "bytes":
			r.Bytes = a.Value.Raw == "true"
		}
	}
	return r, true
}

func (x *textRule) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if err := badKeyHeader(ctx); err != nil {
		return refusedText(err)
	}
	if op.Operation == nil {
		return nil
	}
	if err := x.selections(op.Operation.SelectionSet, op.Variables, 0); err != nil {
		return refusedText(err)
	}
	return nil
}

// refusedText is the answer to a refused string: INVALID_INPUT, and the
// field in extensions.field for programs.
func refusedText(err error) *gqlerror.Error {
	e := gqlerror.Errorf("%s", err.Error())
	e.Extensions = map[string]any{"code": codeInvalidInput}
	var ie *input.Error
	if errors.As(err, &ie) {
		e.Extensions["field"] = ie.Field
	}
	return e
}

// selections walks every field's arguments, fragments included. depth
// stops a fragment cycle, which validation refuses before this runs but
// which must not hang the walk if it ever did not.
func (x *textRule) selections(set ast.SelectionSet, vars map[string]any, depth int) error {
	if depth > 64 {
		return nil
	}
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Definition != nil {
				for _, a := range s.Arguments {
					def := s.Definition.Arguments.ForName(a.Name)
					if def == nil {
						continue
					}
					r, ok := x.args[def]
					if !ok {
						r = input.Default
					}
					if err := x.literal(a.Value, def.Type, r, vars); err != nil {
						return prefixField(s.Name+"."+a.Name, err)
					}
				}
			}
			if err := x.selections(s.SelectionSet, vars, depth+1); err != nil {
				return prefixField(s.Name, err)
			}
		case *ast.InlineFragment:
			if err := x.selections(s.SelectionSet, vars, depth+1); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			if s.Definition != nil {
				if err := x.selections(s.Definition.SelectionSet, vars, depth+1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// literal checks a value as written in the document; a variable is checked
// as its coerced value.
func (x *textRule) literal(v *ast.Value, t *ast.Type, r input.Rule, vars map[string]any) error {
	if v == nil || t == nil {
		return nil
	}
	switch v.Kind {
	case ast.Variable:
		return x.value(vars[v.Raw], t, r)
	case ast.StringValue, ast.BlockValue:
		if t.Elem == nil && x.isScalar(t.NamedType) {
			return checkText(v.Raw, r)
		}
	case ast.ListValue:
		elem := t.Elem
		if elem == nil {
			elem = t // a single value where a list is expected: coerced to a list of one
		}
		for i, c := range v.Children {
			if err := x.literal(c.Value, elem, r, vars); err != nil {
				return prefixField("["+strconv.Itoa(i)+"]", err)
			}
		}
	case ast.ObjectValue:
		def := x.schema.Types[t.NamedType]
		if def == nil {
			return nil
		}
		for _, c := range v.Children {
			f := def.Fields.ForName(c.Name)
			if f == nil {
				continue
			}
			if err := x.literal(c.Value, f.Type, x.fieldRule(f), vars); err != nil {
				return prefixField("."+c.Name, err)
			}
		}
	}
	return nil
}

// value checks a coerced variable value of type t.
func (x *textRule) value(v any, t *ast.Type, r input.Rule) error {
	if v == nil {
		return nil
	}
	if t.Elem != nil {
		l, ok := v.([]any)
		if !ok {
			return x.value(v, t.Elem, r) // one value given for a list
		}
		for i, e := range l {
			if err := x.value(e, t.Elem, r); err != nil {
				return prefixField("["+strconv.Itoa(i)+"]", err)
			}
		}
		return nil
	}
	def := x.schema.Types[t.NamedType]
	if def == nil {
		return nil
	}
	switch def.Kind {
	case ast.Scalar:
		if s, ok := v.(string); ok {
			return checkText(s, r)
		}
	case ast.InputObject:
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for _, f := range def.Fields {
			fv, ok := m[f.Name]
			if !ok {
				continue
			}
			if err := x.value(fv, f.Type, x.fieldRule(f)); err != nil {
				return prefixField("."+f.Name, err)
			}
		}
	}
	return nil
}

func (x *textRule) isScalar(name string) bool {
	def := x.schema.Types[name]
	return def != nil && def.Kind == ast.Scalar
}

func (x *textRule) fieldRule(f *ast.FieldDefinition) input.Rule {
	if r, ok := x.fields[f]; ok {
		return r
	}
	return input.Default
}

// checkText is input.Check with the field left for the walk to fill in on its
// way back up: no path is built unless a string is refused.
func checkText(s string, r input.Rule) error {
	if why := input.Check(s, r); why != "" {
		return &input.Error{Reason: why}
	}
	return nil
}

// prefixField puts the part of the path a level of the walk knows in front of
// what the levels below it found.
func prefixField(p string, err error) error {
	var ie *input.Error
	if !errors.As(err, &ie) {
		return err
	}
	switch {
	case ie.Field == "":
		ie.Field = p
	case ie.Field[0] == '.' || ie.Field[0] == '[':
		ie.Field = p + ie.Field
	default:
		ie.Field = p + "." + ie.Field
	}
	return err
}
