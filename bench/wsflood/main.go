// Command wsflood is issue 38's WebSocket flood (docs/benchmarks.md): it
// opens -conns idle graphql-transport-ws connections to a running `storefront
// serve`, spread over -addrs loopback source addresses (127.0.0.2, .3, …, so
// that the per-address cap is not what stops them), each acknowledged
// (connection_init, connection_ack) and then idle but answering pings, and
// reports how many were opened and how the others were refused (status and
// Retry-After), and the server's memory from /proc: VmRSS before, sampled
// while the connections open and are held, and VmHWM at the end.
//
//	storefront serve --demo --db sqlite:/tmp/f.db --addr 127.0.0.1:8091 & pid=$!
//	go run ./bench/wsflood -url http://127.0.0.1:8091 -pid $pid -conns 9000 -addrs 3
//
// Only ever point it at a server of your own on 127.0.0.1.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	coderws "github.com/coder/websocket"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:8091", "the server")
	pid := flag.Int("pid", 0, "the server's process id (for VmRSS and VmHWM)")
	conns := flag.Int("conns", 9000, "connections to open")
	addrs := flag.Int("addrs", 3, "loopback source addresses, 127.0.0.2 onwards")
	par := flag.Int("c", 64, "connections being opened at once")
	hold := flag.Duration("hold", 5*time.Second, "how long the open connections are held before the final reading")
	flag.Parse()
	if *pid == 0 {
		log.Fatal("-pid is required")
	}
	wsURL := "ws" + strings.TrimPrefix(*base, "http") + "/graphql"
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("wsflood %s: %d connections from %d addresses to %s, load average %s\n",
		time.Now().UTC().Format(time.RFC3339), *conns, *addrs, wsURL, strings.TrimSpace(string(load)))
	before := status(*pid)
	fmt.Printf("before: VmRSS %d MiB, VmHWM %d MiB\n", before["VmRSS"]>>10, before["VmHWM"]>>10)

	ctx, cancel := context.WithCancel(context.Background())
	var maxRSS atomic.Int64
	sampled := make(chan struct{})
	go func() { // VmRSS every 100 ms until the end
		defer close(sampled)
		for {
			if v := status(*pid)["VmRSS"]; v > maxRSS.Load() {
				maxRSS.Store(v)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()

	clients := make([]*http.Client, *addrs)
	for i := range clients {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i))}}
		clients[i] = &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	}
	var (
		mu      sync.Mutex
		open    []*coderws.Conn
		refused = map[string]int{} // "503 Retry-After 5" → count
		failed  = map[string]int{}
		wg      sync.WaitGroup
		sem     = make(chan struct{}, *par)
	)
	start := time.Now()
	for i := range *conns {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, resp, err := dial(ctx, wsURL, clients[i%len(clients)])
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				open = append(open, c)
			case resp != nil && resp.StatusCode != http.StatusSwitchingProtocols:
				refused[fmt.Sprintf("%d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))]++
			default:
				failed[err.Error()]++
			}
		}()
	}
	wg.Wait()
	fmt.Printf("opened %d of %d in %v\n", len(open), *conns, time.Since(start).Round(time.Millisecond))
	for _, k := range slices.Sorted(maps.Keys(refused)) {
		fmt.Printf("refused: %s × %d\n", k, refused[k])
	}
	for _, k := range slices.Sorted(maps.Keys(failed)) {
		fmt.Printf("failed: %s × %d\n", k, failed[k])
	}
	time.Sleep(*hold)
	held := status(*pid)
	fmt.Printf("held %v: VmRSS %d MiB (sampled max %d MiB), VmHWM %d MiB\n", *hold, held["VmRSS"]>>10, maxRSS.Load()>>10, held["VmHWM"]>>10)
	if n := len(open); n > 0 {
		fmt.Printf("per open connection: %.1f KiB of RSS\n", float64(held["VmRSS"]-before["VmRSS"])/float64(n))
	}
	for _, c := range open {
		_ = c.CloseNow()
	}
	cancel()
	<-sampled
}

// dial opens one connection and waits for connection_ack; a reader then
// answers the server's pings until ctx ends.
func dial(ctx context.Context, url string, hc *http.Client) (*coderws.Conn, *http.Response, error) {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, resp, err := coderws.Dial(dctx, url, &coderws.DialOptions{HTTPClient: hc, Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		return nil, resp, err
	}
	if err := c.Write(dctx, coderws.MessageText, []byte(`{"type":"connection_init"}`)); err != nil {
		return nil, nil, err
	}
	var m struct{ Type string }
	_, b, err := c.Read(dctx)
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err == nil && m.Type != "connection_ack" {
		err = errors.New("first message " + m.Type)
	}
	if err != nil {
		_ = c.CloseNow()
		return nil, nil, err
	}
	go func() {
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			if json.Unmarshal(b, &m) == nil && m.Type == "ping" {
				_ = c.Write(ctx, coderws.MessageText, []byte(`{"type":"pong"}`))
			}
		}
	}()
	return c, resp, nil
}

// status reads /proc/PID/status's memory lines in KiB.
func status(pid int) map[string]int64 {
	out := map[string]int64{}
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if f := strings.Fields(v); ok && len(f) == 2 && f[1] == "kB" {
			out[k], _ = strconv.ParseInt(f[0], 10, 64)
		}
	}
	return out
}
