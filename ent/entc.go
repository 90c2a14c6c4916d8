//go:build ignore

package main

import (
	"log"

	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
)

func main() {
	err := entc.Generate("./ent/schema", &gen.Config{
		Target:  "./ent",
		Package: "storefront/ent",
		Features: []gen.Feature{
			gen.FeatureUpsert,
			gen.FeatureExecQuery,
			gen.FeatureLock,
			gen.FeatureModifier,
		},
	})
	if err != nil {
		log.Fatalf("running ent codegen: %v", err)
	}
}
