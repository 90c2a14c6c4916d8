// Command attack replays issue 15's resource attacks against a running
// `storefront serve` and reports what they cost the server: answer codes and
// sizes, the latency of a plain product page sent meanwhile, and the
// server's memory (VmRSS sampled, VmHWM at the end, from /proc).
//
//	storefront serve --demo --db sqlite:/tmp/a.db --addr 127.0.0.1:8090 & pid=$!
//	go run ./bench/attack -url http://127.0.0.1:8090 -pid $pid -attack aliases
//	go run ./bench/attack -url http://127.0.0.1:8090 -pid $pid -attack comments -settle 130s
//
// aliases: N aliases of the 500-SKU shoe's SKU list, registered once as a
// persisted query, then sent as hash-only GETs by -c clients for -d.
// comments: distinct `{ __typename } #<comment>` queries, each registered
// with its hash, by -c clients for -d (every one a new cache entry).
// goods: issue 25's `goods(id: N)` for a new N each time; variables: the
// product page with an undeclared -var-bytes variable that differs each
// time; mixed: the two alternating; carts: anonymous cartCreate.
//
// Only ever point it at a server of your own on 127.0.0.1.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:8090", "the server")
	pid := flag.Int("pid", 0, "the server's process id (for VmRSS / VmHWM); 0: no memory figures")
	attack := flag.String("attack", "aliases", "aliases, comments, goods, variables, mixed or carts")
	clients := flag.Int("c", 16, "concurrent attacking clients")
	dur := flag.Duration("d", 20*time.Second, "how long the attack runs")
	aliases := flag.Int("aliases", 240, "aliases: how many")
	goods := flag.Int("goods", 3, "aliases: the goods whose SKUs are asked for (3: the demo's 500-SKU shoe)")
	comment := flag.Int("comment-bytes", 1_000_000, "comments: bytes of comment per query")
	varBytes := flag.Int("var-bytes", 2048, "variables, mixed: bytes of the undeclared variable")
	apq := flag.Bool("apq", true, "comments: register each query with its hash (false: plain POSTs, cached by the parsed-query cache only)")
	pageGoods := flag.Int("page-goods", 3, "the goods of the product page probed meanwhile")
	probeEvery := flag.Duration("probe-every", 250*time.Millisecond, "how often the product page is probed")
	settle := flag.Duration("settle", 0, "after the attack, wait this long and read the server's heap from /metrics (Go collects at least every 2 minutes)")
	flag.Parse()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *clients + 2}, Timeout: 60 * time.Second}
	mem := startSampler(*pid)
	fmt.Printf("before: %s\n", mem.now())

	var send func(i int) result
	switch *attack {
	case "aliases":
		q := aliasQuery(*aliases, *goods)
		ext := persisted(q)
		reg := post(client, *base+"/graphql", map[string]any{"query": q, "extensions": ext})
		fmt.Printf("query: %d aliases, %d bytes; registration: HTTP %d, code %q, %d bytes answered in %v\n",
			*aliases, len(q), reg.status, reg.code, reg.bytes, reg.took.Round(time.Millisecond))
		extJSON, _ := json.Marshal(ext)
		get := *base + "/graphql?extensions=" + url.QueryEscape(string(extJSON))
		fmt.Printf("GET: %d bytes of URL\n", len(get))
		send = func(int) result { return do(client, mustReq(http.NewRequest(http.MethodGet, get, nil))) }
	case "comments":
		pad := strings.Repeat("x", *comment)
		var n atomic.Int64
		send = func(int) result {
			q := "{ __typename } #" + strconv.FormatInt(n.Add(1), 10) + pad
			body := map[string]any{"query": q}
			if *apq {
				body["extensions"] = persisted(q)
			}
			return post(client, *base+"/graphql", body)
		}
	case "goods":
		// Issue 25: a product page for an id never asked before, each time
		// (most are missing goods: a null answer is cached too).
		var n atomic.Int64
		send = func(int) result {
			return post(client, *base+"/graphql", map[string]any{
				"query":     `query($id: ID!) { goods(id: $id) { id name priceRange { min max } } }`,
				"variables": map[string]any{"id": strconv.FormatInt(n.Add(1), 10)},
			})
		}
	case "variables":
		// Issue 25: the product page with an undeclared variable of
		// -var-bytes that differs each time.
		pad := strings.Repeat("v", *varBytes)
		var n atomic.Int64
		send = func(int) result {
			return post(client, *base+"/graphql", map[string]any{
				"query": pageQuery,
				"variables": map[string]any{"id": strconv.Itoa(*pageGoods), "selected": []string{},
					"pad": strconv.FormatInt(n.Add(1), 10) + pad},
			})
		}
	case "mixed":
		// Both of the above, alternating.
		pad := strings.Repeat("v", *varBytes)
		var n atomic.Int64
		send = func(i int) result {
			k := n.Add(1)
			if k%2 == 0 {
				return post(client, *base+"/graphql", map[string]any{
					"query":     `query($id: ID!) { goods(id: $id) { id name priceRange { min max } } }`,
					"variables": map[string]any{"id": strconv.FormatInt(k, 10)},
				})
			}
			return post(client, *base+"/graphql", map[string]any{
				"query": pageQuery,
				"variables": map[string]any{"id": strconv.Itoa(*pageGoods), "selected": []string{},
					"pad": strconv.FormatInt(k, 10) + pad},
			})
		}
	case "carts":
		// Issue 25: anonymous cartCreate as fast as -c clients can.
		send = func(int) result {
			return post(client, *base+"/graphql", map[string]any{"query": `mutation { cartCreate { id } }`})
		}
	default:
		log.Fatalf("unknown -attack %q", *attack)
	}

	stop := time.Now().Add(*dur)
	var wg sync.WaitGroup
	results := make([][]result, *clients)
	for c := range *clients {
		wg.Go(func() {
			for i := 0; time.Now().Before(stop); i++ {
				results[c] = append(results[c], send(i))
			}
		})
	}
	probes := probe(client, *base, *pageGoods, *probeEvery, stop)
	wg.Wait()
	fmt.Printf("attack: %d clients for %v\n", *clients, *dur)
	summarize("attack", slices.Concat(results...))
	summarize("product page", <-probes)
	fmt.Printf("after: %s\n", mem.stop())
	if *settle > 0 {
		time.Sleep(*settle)
		fmt.Printf("after %v idle: %s; %s\n", *settle, readProc(*pid), heap(client, *base))
	}
}

// aliasQuery is the attack: n aliases of one goods' SKU list.
func aliasQuery(n, goods int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, " a%d: goods(id: %d) { skus { id specValueStr sellPrice stock } }", i, goods)
	}
	b.WriteString(" }")
	return b.String()
}

func persisted(q string) map[string]any {
	sum := sha256.Sum256([]byte(q))
	return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
}

const pageQuery = `query Product($id: ID!, $selected: [ID!]!) { goods(id: $id) { id name specs { id name values { id name } }
  priceRange { min max } totalStock selectable(selected: $selected) { specValueId selectable }
  sku: skuBySelection(specValueIds: $selected) { id specValueStr sellPrice lineationPrice stock } } }`

// probe sends the shop's product-page query every interval until stop.
func probe(client *http.Client, base string, goods int, every time.Duration, stop time.Time) <-chan []result {
	out := make(chan []result, 1)
	go func() {
		var rs []result
		for t := time.NewTicker(every); time.Now().Before(stop); <-t.C {
			rs = append(rs, post(client, base+"/graphql", map[string]any{
				"query": pageQuery, "variables": map[string]any{"id": strconv.Itoa(goods), "selected": []string{}},
			}))
		}
		out <- rs
	}()
	return out
}

type result struct {
	status int
	code   string // first errors[].extensions.code, "" when none
	bytes  int
	took   time.Duration
	err    error
}

func post(client *http.Client, u string, body map[string]any) result {
	raw, _ := json.Marshal(body)
	req := mustReq(http.NewRequest(http.MethodPost, u, bytes.NewReader(raw)))
	req.Header.Set("Content-Type", "application/json")
	return do(client, req)
}

func mustReq(r *http.Request, err error) *http.Request {
	if err != nil {
		log.Fatal(err)
	}
	return r
}

func do(client *http.Client, req *http.Request) result {
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return result{err: err, took: time.Since(start)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	r := result{status: resp.StatusCode, bytes: len(raw), took: time.Since(start), err: err}
	var g struct {
		Errors []struct{ Extensions map[string]any }
	}
	if json.Unmarshal(raw, &g) == nil && len(g.Errors) > 0 {
		r.code, _ = g.Errors[0].Extensions["code"].(string)
		if r.code == "" {
			r.code = "(no code)"
		}
	}
	return r
}

func summarize(name string, rs []result) {
	if len(rs) == 0 {
		fmt.Printf("%s: no requests\n", name)
		return
	}
	answers := map[string]int{}
	var lat []time.Duration
	minB, maxB := rs[0].bytes, rs[0].bytes
	for _, r := range rs {
		k := fmt.Sprintf("HTTP %d %s", r.status, r.code)
		if r.err != nil {
			k = "error: " + r.err.Error()
		}
		answers[k]++
		lat = append(lat, r.took)
		minB, maxB = min(minB, r.bytes), max(maxB, r.bytes)
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))].Round(time.Millisecond) }
	fmt.Printf("%s: %d requests, answers %v, %d-%d bytes, latency p50 %v p99 %v max %v\n",
		name, len(rs), answers, minB, maxB, pct(0.5), pct(0.99), lat[len(lat)-1].Round(time.Millisecond))
}

// sampler reads the server's VmRSS every 50 ms and keeps the largest.
type sampler struct {
	pid    int
	maxRSS atomic.Int64
	done   chan struct{}
}

func startSampler(pid int) *sampler {
	s := &sampler{pid: pid, done: make(chan struct{})}
	if pid == 0 {
		return s
	}
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if kb := procKB(pid, "VmRSS"); kb > s.maxRSS.Load() {
				s.maxRSS.Store(kb)
			}
			select {
			case <-s.done:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *sampler) now() string { return readProc(s.pid) }

func (s *sampler) stop() string {
	close(s.done)
	if s.pid == 0 {
		return "no pid"
	}
	return fmt.Sprintf("%s; VmRSS sampled max %d MB", readProc(s.pid), s.maxRSS.Load()>>10)
}

func readProc(pid int) string {
	if pid == 0 {
		return "no pid"
	}
	return fmt.Sprintf("VmRSS %d MB, VmHWM %d MB", procKB(pid, "VmRSS")>>10, procKB(pid, "VmHWM")>>10)
}

// procKB reads one "Name:   123 kB" line of /proc/PID/status.
func procKB(pid int, name string) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// heap reads the Go heap figures from the server's /metrics.
func heap(client *http.Client, base string) string {
	resp, err := client.Get(base + "/metrics")
	if err != nil {
		return "/metrics: " + err.Error()
	}
	defer resp.Body.Close()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		for _, m := range []string{"go_memstats_heap_inuse_bytes ", "go_memstats_heap_alloc_bytes "} {
			if v, ok := strings.CutPrefix(sc.Text(), m); ok {
				f, _ := strconv.ParseFloat(v, 64)
				out = append(out, fmt.Sprintf("%s%.0f MB", m, f/1e6))
			}
		}
	}
	return strings.Join(out, ", ")
}
