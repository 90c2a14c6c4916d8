package main

import (
	"context"
	"fmt"
	"time"

	"storefront/internal/catalog"
)

// seedBench writes a generated catalog for the listing benchmark
// (docs/benchmarks.md) into a migrated database.
func seedBench(ctx context.Context, args []string) error {
	var c config
	fs := flagSet("seed-bench", &c)
	n := fs.Int("goods", 100_000, "how many goods to generate")
	seed := fs.Uint64("seed", 1, "random seed: the same seed gives the same catalog")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c.Migrate = true
	db, err := openDB(ctx, &c)
	if err != nil {
		return err
	}
	defer db.Close()
	cat := catalog.New(db, catalog.DefaultConfig())
	defer cat.Close()
	began := time.Now()
	err = cat.SeedBench(ctx, *n, *seed, func(done int) {
		if done%10_000 == 0 || done == *n {
			fmt.Printf("%d goods (%s)\n", done, time.Since(began).Round(time.Second))
		}
	})
	if err != nil {
		return err
	}
	fmt.Printf("seeded %d goods under category %q and its siblings in %s\n", *n, catalog.BenchCategory, time.Since(began).Round(time.Second))
	return nil
}
