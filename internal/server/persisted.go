package server

import (
	"context"

	"storefront/internal/vocab/errs"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// DefaultMaxPersistedQueryBytes is Options.MaxPersistedQueryBytes when
// unset: several times the largest query the shop sends (under 1 KB),
// small enough that the persisted-query store holds a thousand of the
// largest.
const DefaultMaxPersistedQueryBytes = 16 << 10

// persistedSize refuses to register a persisted query over max bytes. A
// registered query is kept for whoever sends its hash, at the cost of the
// server's memory: a 176-byte GET then stands for whatever was registered.
// Larger queries still run when sent as plain queries. It must come before
// gqlgen's AutomaticPersistedQuery, which stores the query.
type persistedSize struct{ max int }

var _ interface {
	graphql.OperationParameterMutator
	graphql.HandlerExtension
} = persistedSize{}

func (persistedSize) ExtensionName() string                   { return "PersistedQuerySize" }
func (persistedSize) Validate(graphql.ExecutableSchema) error { return nil }

func (p persistedSize) MutateOperationParameters(_ context.Context, raw *graphql.RawParams) *gqlerror.Error {
	if raw.Extensions["persistedQuery"] == nil || len(raw.Query) <= p.max {
		return nil
	}
	return refusal(errs.InvalidInput, "a persisted query may have at most %d bytes, this one has %d: send it as a plain query, without extensions.persistedQuery", p.max, len(raw.Query))
}
