package server

import (
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// rulesWithoutSuggestions is gqlparser's default rule set with every rule
// that proposes names ("Did you mean "name"?") swapped for its silent
// twin. With introspection off, those suggestions would hand out the
// schema one typo at a time. gqlgen's SetDisableSuggestion swaps only the
// first two of these (and keeps doing so on every parse); the others are
// swapped here. A fresh set each call: gqlgen edits the one it gets.
func rulesWithoutSuggestions() *rules.Rules {
	r := rules.NewDefaultRules()
	for _, swap := range []struct {
		name string
		rule core.Rule
	}{
		{"FieldsOnCorrectType", rules.FieldsOnCorrectTypeRuleWithoutSuggestions},
		{"ScalarLeafs", rules.ScalarLeafsRuleWithoutSuggestions},
		{"KnownArgumentNames", rules.KnownArgumentNamesRuleWithoutSuggestions},
		{"KnownTypeNames", rules.KnownTypeNamesRuleWithoutSuggestions},
		{"ValuesOfCorrectType", rules.ValuesOfCorrectTypeRuleWithoutSuggestions},
	} {
		r.RemoveRule(swap.name)
		r.AddRule(swap.rule.Name, swap.rule.RuleFunc)
	}
	return r
}
