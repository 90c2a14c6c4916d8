package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/auth"
	"storefront/internal/shipping"
)

// migrateCmd is `storefront migrate`.
type migrateCmd struct {
	Database dbFlags `embed:"" group:"database"`
}

func (c *migrateCmd) Run(ctx context.Context) error {
	db, err := c.Database.open(ctx, c.Database.DB, true, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	fmt.Println("schema is up to date")
	return nil
}

// seedDemoCmd is `storefront seed-demo`.
type seedDemoCmd struct {
	Database dbFlags `embed:"" group:"database"`
}

func (c *seedDemoCmd) Run(ctx context.Context) error {
	db, err := c.Database.open(ctx, c.Database.DB, true, nil)
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

// jwtFlags are the server's signing secret, hidden from --help: a secret
// belongs in the environment, not in the process list.
type jwtFlags struct {
	Secret string `name:"jwt-secret" env:"STOREFRONT_JWT_SECRET" hidden:"" help:"the secret tokens are signed with"`
}

// tokenCmd is `storefront token`.
type tokenCmd struct {
	Sub  string        `help:"user id (the token's sub)"`
	Role string        `default:"customer" help:"admin or customer"`
	TTL  time.Duration `name:"ttl" default:"1h" help:"how long the token is valid"`
	JWT  jwtFlags      `embed:""`
}

func (c *tokenCmd) Run() error {
	if c.JWT.Secret == "" {
		return errors.New("STOREFRONT_JWT_SECRET is not set: tokens are signed with the server's secret")
	}
	s, err := auth.NewSigner(c.JWT.Secret)
	if err != nil {
		return err
	}
	t, err := s.Issue(strings.TrimSpace(c.Sub), auth.Role(c.Role), c.TTL)
	if err != nil {
		return err
	}
	fmt.Println(t)
	return nil
}
