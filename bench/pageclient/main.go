// Command pageclient sends a fixed number of anonymous product-page POSTs
// (the demo T-shirt with its first spec value selected, bench.PageQuery) one
// after another on one keep-alive connection, for counting a server's
// instructions per cached page (scripts/callgrind.sh):
//
//	pageclient -addr 127.0.0.1:8080 [-n 10000] [-warm 200] [-save FILE]
//
// It sends -warm requests (the first fills the response cache), prints
// "ready", waits for a line on stdin, sends -n requests, each of which must
// answer 200 with the bytes of the first answer, prints "done …" and exits at the next line.
// The client runs in a process of its own, so a count of the server's
// process holds the server's work alone. -save writes the first answer to
// FILE (bytesceiling serves those bytes) and the request to FILE.request. -goods 0 asks nothing to find a
// page: it posts -body's bytes as they are (the ceiling has no catalog).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"time"

	"storefront/bench"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "the server's host:port")
	n := flag.Int("n", 10000, "requests measured")
	warm := flag.Int("warm", 200, "requests sent first")
	save := flag.String("save", "", "write the first answer to this file, the request to FILE.request")
	goods := flag.Int("goods", 1, "the goods whose page is asked for (its first spec's first value selected)")
	bodyFile := flag.String("body", "", "with -goods 0: the request body to post")
	flag.Parse()
	url := "http://" + *addr + "/graphql"
	// No Accept-Encoding (as wrk sends none): the answer is the page's bytes.
	c := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1}}
	body, err := pageBody(c, url, *goods, *bodyFile)
	if err != nil {
		log.Fatal(err)
	}
	first, err := post(c, url, body, nil)
	if err != nil {
		log.Fatal(err)
	}
	if *goods != 0 && bytes.Contains(first, []byte(`"errors"`)) {
		log.Fatalf("the page answered an error: %.300s", first)
	}
	if *save != "" {
		if err := errors.Join(os.WriteFile(*save, first, 0o644), os.WriteFile(*save+".request", body, 0o644)); err != nil {
			log.Fatal(err)
		}
	}
	for range *warm {
		if _, err := post(c, url, body, first); err != nil {
			log.Fatal(err)
		}
	}
	in := bufio.NewReader(os.Stdin)
	fmt.Println("ready")
	if _, err := in.ReadString('\n'); err != nil {
		log.Fatal(err)
	}
	began := time.Now()
	for range *n {
		if _, err := post(c, url, body, first); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("done: %d requests of %d bytes answered %d bytes, %s\n", *n, len(body), len(first), time.Since(began).Round(time.Millisecond))
	_, _ = in.ReadString('\n')
}

// pageBody is the POST of goods' page, its first spec's first value
// selected, as the response cache's benchmark sends it.
func pageBody(c *http.Client, url string, goods int, file string) ([]byte, error) {
	if goods == 0 {
		return os.ReadFile(file)
	}
	id := strconv.Itoa(goods)
	q, _ := json.Marshal(map[string]any{"query": `query($id: ID!) { goods(id: $id) { specs { values { id } } } }`, "variables": map[string]any{"id": id}})
	raw, err := post(c, url, q, nil)
	if err != nil {
		return nil, err
	}
	var r struct {
		Data struct {
			Goods struct {
				Specs []struct{ Values []struct{ ID string } }
			}
		}
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Data.Goods.Specs) == 0 || len(r.Data.Goods.Specs[0].Values) == 0 {
		return nil, fmt.Errorf("goods %s has no spec value to select: %v %.300s", id, err, raw)
	}
	return json.Marshal(map[string]any{"query": bench.PageQuery, "variables": map[string]any{"id": id, "sel": []string{r.Data.Goods.Specs[0].Values[0].ID}}})
}

// post sends one request and returns the answer; with want, the answer must
// be exactly those bytes.
func post(c *http.Client, url string, body, want []byte) ([]byte, error) {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || (want != nil && !bytes.Equal(got, want)) {
		return nil, fmt.Errorf("status %d, %d bytes, not the first answer: %.300s", resp.StatusCode, len(got), got)
	}
	return got, nil
}
