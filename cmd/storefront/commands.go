package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/shipping"
)

func openDB(ctx context.Context, c *config) (*store.DB, error) {
	if c.DBMaxConns < 1 || c.DBBatchConns < 1 {
		return nil, fmt.Errorf("--db-max-conns %d, --db-batch-conns %d: each must be at least 1", c.DBMaxConns, c.DBBatchConns)
	}
	db, err := store.Open(ctx, c.DB, c.pools(), c.traced())
	if err != nil {
		return nil, err
	}
	if c.Migrate {
		if err := db.Migrate(ctx); err != nil {
			db.Close()
			return nil, err
		}
		// Goods written before slugs and the listing existed get theirs.
		if n, err := catalog.Backfill(ctx, db); err != nil {
			db.Close()
			return nil, err
		} else if n > 0 {
			fmt.Printf("listed %d goods written before the listing existed\n", n)
		}
	}
	return db, nil
}

// pools is the pool sizes of --db-max-conns and --db-batch-conns.
func (c *config) pools() store.Option { return store.WithPools(c.DBMaxConns, c.DBBatchConns) }

// traced gives every statement a span when serve traces (no wrapper off).
func (c *config) traced() store.Option {
	if !c.tracer.On() {
		return store.WithConnectorWrapper(nil)
	}
	return store.WithConnectorWrapper(c.tracer.Connector)
}

// migratedDB parses a command's --db and opens that database migrated.
func migratedDB(ctx context.Context, name string, args []string) (*store.DB, error) {
	var c config
	if err := flagSet(name, &c).Parse(args); err != nil {
		return nil, err
	}
	c.Migrate = true
	return openDB(ctx, &c)
}

func migrate(ctx context.Context, args []string) error {
	db, err := migratedDB(ctx, "migrate", args)
	if err != nil {
		return err
	}
	defer db.Close()
	fmt.Println("schema is up to date")
	return nil
}

func seedDemo(ctx context.Context, args []string) error {
	db, err := migratedDB(ctx, "seed-demo", args)
	if err != nil {
		return err
	}
	defer db.Close()
	cat := catalog.New(db, catalog.DefaultConfig())
	ids, err := demo.Seed(ctx, cat)
	if err != nil {
		return err
	}
	printDemo(ids)
	return seedShipping(ctx, cat, shipping.New(db))
}

// seedShipping adds the demo's goods sold by weight, its freight template
// and the demo customer's address (demo.SeedShipping).
func seedShipping(ctx context.Context, cat *catalog.Service, ship *shipping.Service) error {
	goods, template, err := demo.SeedShipping(ctx, cat, ship, demo.Customer)
	if err != nil {
		return err
	}
	fmt.Printf("demo shipping: water bottle goods id %d sold by weight under freight template %d; the demo customer has an address in Shanghai\n", goods, template)
	return nil
}

func printDemo(ids map[string]int64) {
	fmt.Printf("demo catalog: T-shirt goods id %d, bag goods id %d, 500-SKU shoe goods id %d, lock-at-order scarf goods id %d\n",
		ids[demo.TShirtCode], ids[demo.BagCode], ids[demo.ShoeCode], ids[demo.ScarfCode])
}

func token(args []string) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	sub := fs.String("sub", "", "user id (the token's sub)")
	role := fs.String("role", "customer", "admin or customer")
	ttl := fs.Duration("ttl", time.Hour, "how long the token is valid")
	if err := fs.Parse(args); err != nil {
		return err
	}
	secret := env("JWT_SECRET", "")
	if secret == "" {
		return errors.New("STOREFRONT_JWT_SECRET is not set: tokens are signed with the server's secret")
	}
	s, err := auth.NewSigner(secret)
	if err != nil {
		return err
	}
	t, err := s.Issue(strings.TrimSpace(*sub), auth.Role(*role), *ttl)
	if err != nil {
		return err
	}
	fmt.Println(t)
	return nil
}
