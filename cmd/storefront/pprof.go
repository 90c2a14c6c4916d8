//go:build pprof

// A profiling build only (go build -tags pprof): serve's CPU profile under a
// load generator in another process (docs/benchmarks.md, "CPU per order").
// The default binary has no profiling endpoint, so none can be left open.
package main

import (
	"net/http"
	"net/http/pprof"
	"os"
)

func init() {
	addr := os.Getenv("STOREFRONT_PPROF_ADDR")
	if addr == "" {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	go func() { _ = http.ListenAndServe(addr, mux) }()
}
