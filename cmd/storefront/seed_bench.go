package main

import (
	"context"
	"fmt"
	"time"

	"storefront/internal/catalog"
)

// seedBenchCmd is `storefront seed-bench`: it writes a generated catalog
// for the listing benchmark
// (docs/benchmarks.md) into a migrated database.
type seedBenchCmd struct {
	Database dbFlags `embed:"" group:"database"`
	Goods    int     `name:"goods" default:"100000" help:"how many goods to generate"`
	Seed     uint64  `name:"seed" default:"1" help:"random seed: the same seed gives the same catalog"`
}

func (c *seedBenchCmd) Run(ctx context.Context) error {
	db, err := c.Database.open(ctx, c.Database.DB, true, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	cat := catalog.New(db, catalog.DefaultConfig())
	defer cat.Close()
	began := time.Now()
	err = cat.SeedBench(ctx, c.Goods, c.Seed, func(done int) {
		if done%10_000 == 0 || done == c.Goods {
			fmt.Printf("%d goods (%s)\n", done, time.Since(began).Round(time.Second))
		}
	})
	if err != nil {
		return err
	}
	fmt.Printf("seeded %d goods under category %q and its siblings in %s\n", c.Goods, catalog.BenchCategory, time.Since(began).Round(time.Second))
	return nil
}
