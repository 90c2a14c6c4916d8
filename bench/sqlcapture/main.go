// Command sqlcapture is a TCP proxy in front of MariaDB that logs every
// COM_QUERY a client sends, as "=== <packet bytes> bytes" and the text:
// what one group-commit batch sends, statement by statement (docs/benchmarks.md,
// issue 32). Usage: sqlcapture LISTEN UPSTREAM LOGFILE. Plain TCP only (no TLS,
// no compression); prepared statements are not logged.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"sync"
)

var mu sync.Mutex
var out *os.File

func main() {
	ln, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		panic(err)
	}
	out, _ = os.Create(os.Args[3])
	for {
		c, err := ln.Accept()
		if err != nil {
			panic(err)
		}
		go serve(c, os.Args[2])
	}
}

func serve(c net.Conn, upstream string) {
	u, err := net.Dial("tcp", upstream)
	if err != nil {
		c.Close()
		return
	}
	go func() { io.Copy(c, u); c.Close() }()
	hdr := make([]byte, 4)
	for {
		if _, err := io.ReadFull(c, hdr); err != nil {
			u.Close()
			return
		}
		n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
		body := make([]byte, n)
		if _, err := io.ReadFull(c, body); err != nil {
			u.Close()
			return
		}
		if hdr[3] == 0 && n > 0 && body[0] == 3 {
			mu.Lock()
			fmt.Fprintf(out, "=== %d bytes\n%s\n", n+4, body[1:])
			mu.Unlock()
		}
		u.Write(hdr)
		u.Write(body)
	}
}
