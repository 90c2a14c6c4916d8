package storefront

// ent first: gqlgen binds to types in packages ent generates into.
//go:generate go run -mod=mod ./ent/entc.go
//go:generate go run -mod=mod github.com/99designs/gqlgen generate
