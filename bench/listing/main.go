// Command listing measures goodsList(first: 20) on a catalog written by
// `storefront seed-bench`: each sort field, ascending, with and without a
// category and a search term, closed-loop clients calling the catalog's
// List in process (the listing's index range, the page's goods rows, views
// from the warm product-view cache), so what is measured is the database
// path, not the response cache. docs/benchmarks.md has the numbers.
//
//	storefront seed-bench --goods 100000 --db 'mysql:root@tcp(127.0.0.1:3306)/listing_bench'
//	go run ./bench/listing -db 'mysql:root@tcp(127.0.0.1:3306)/listing_bench'
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"slices"
	"sync"
	"time"

	"storefront/internal/catalog"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
)

func main() {
	spec := flag.String("db", "", "the seeded database (sqlite:PATH or mysql:DSN)")
	dur := flag.Duration("dur", 3*time.Second, "measured time of each run (after a 300 ms warm-up)")
	clients := flag.Int("clients", 8, "closed-loop clients")
	count := flag.Bool("count", false, "also ask for totalCount (one more query per page)")
	flag.Parse()
	ctx := context.Background()
	db, err := store.Open(ctx, *spec)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	cat := catalog.New(db, catalog.DefaultConfig())
	defer cat.Close()
	slug := catalog.BenchCategory
	k, err := cat.Category(ctx, nil, &slug)
	if err != nil || k == nil {
		log.Fatalf("category %q not found (%v): run storefront seed-bench first", slug, err)
	}
	n, err := db.Client.Goods.Query().Count(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("goodsList(first: 20), %d goods, %d clients, %s per run, totalCount %v\n", n, *clients, *dur, *count)
	fmt.Printf("%-11s %-9s %-7s %9s %8s %8s %6s\n", "sort", "category", "search", "pages/s", "p50 ms", "p99 ms", "goods")
	rates := map[string]float64{}
	for _, sort := range []listing.Field{listing.ByID, listing.ByName, listing.ByPrice, listing.ByCreated, listing.BySales} {
		for _, inCat := range []bool{false, true} {
			for _, search := range []string{"", "纯棉"} {
				p := catalog.ListParams{First: 20, Sort: sort, Search: search, Count: *count}
				if inCat {
					p.CategoryID = &k.ID
				}
				rate, p50, p99, got := run(ctx, cat, p, *clients, *dur)
				fmt.Printf("%-11s %-9v %-7q %9.0f %8.2f %8.2f %6d\n", sort, inCat, search, rate, p50, p99, got)
				rates[fmt.Sprintf("%s/%v/%s", sort, inCat, search)] = rate
			}
		}
	}
	fmt.Printf("in a category, PRICE costs %.2f× ID (rate ratio; the issue's bound is 3×)\n",
		rates["ID/true/"]/rates["PRICE/true/"])
}

func run(ctx context.Context, cat *catalog.Service, p catalog.ListParams, clients int, dur time.Duration) (rate, p50, p99 float64, got int) {
	page, err := cat.List(ctx, catalog.Viewer{}, p) // warms the views of the page
	if err != nil {
		log.Fatal(err)
	}
	got = len(page.Goods)
	var mu sync.Mutex
	var lat []time.Duration
	measure := func(d time.Duration, keep bool) {
		var wg sync.WaitGroup
		end := time.Now().Add(d)
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine []time.Duration
				for time.Now().Before(end) {
					t := time.Now()
					if _, err := cat.List(ctx, catalog.Viewer{}, p); err != nil {
						log.Fatal(err)
					}
					mine = append(mine, time.Since(t))
				}
				if keep {
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	measure(300*time.Millisecond, false)
	measure(dur, true)
	slices.Sort(lat)
	ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
	return float64(len(lat)) / dur.Seconds(), ms(.5), ms(.99), got
}
