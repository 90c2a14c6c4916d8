// Command pagecount sends a fixed number of identical POSTs to a running
// storefront, for counting the server's instructions per request with
// callgrind (bench/pagecount/count.sh): timings on a shared machine swing,
// instruction counts do not. Every answer must be 200 with the bytes of the
// first one, so a count is never of error answers.
//
//	pagecount -addr 127.0.0.1:8080 -body page.json -n 10000 -c 4 [-H 'Name: value']...
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
)

type headers []string

func (h *headers) String() string     { return strings.Join(*h, ", ") }
func (h *headers) Set(v string) error { *h = append(*h, v); return nil }

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "the storefront's address")
	bodyFile := flag.String("body", "page.json", "the POST body")
	n := flag.Int("n", 10000, "requests in all")
	c := flag.Int("c", 4, "keep-alive connections sending them")
	var hs headers
	flag.Var(&hs, "H", "an extra request header (Name: value), repeatable")
	flag.Parse()
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		log.Fatal(err)
	}
	var req bytes.Buffer
	fmt.Fprintf(&req, "POST /graphql HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", *addr, len(body))
	for _, h := range hs {
		req.WriteString(h + "\r\n")
	}
	req.WriteString("\r\n")
	req.Write(body)

	want, err := send(*addr, req.Bytes(), 1, nil)
	if err != nil {
		log.Fatal(err)
	}
	var wg sync.WaitGroup
	errc := make(chan error, *c)
	for i := range *c {
		share := *n / *c
		if i < *n%*c {
			share++
		}
		wg.Go(func() {
			if _, err := send(*addr, req.Bytes(), share, want); err != nil {
				errc <- err
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		log.Fatal(err)
	}
	fmt.Printf("%d requests (plus one first), every answer 200 and %d bytes alike\n", *n, len(want))
}

// send sends req k times on one connection; each answer must be 200 and,
// when want is set, its body want. It returns the last answer's body.
func send(addr string, req []byte, k int, want []byte) ([]byte, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	r := bufio.NewReaderSize(conn, 64<<10)
	var got []byte
	for range k {
		if _, err := conn.Write(req); err != nil {
			return nil, err
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return nil, err
		}
		got, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("status %d: %s", resp.StatusCode, got)
		}
		if want != nil && !bytes.Equal(got, want) {
			return nil, fmt.Errorf("an answer differs from the first:\n%s\n%s", got, want)
		}
	}
	return got, nil
}
