//go:build pprofdebug

// A build for profiling only: built with -tags pprofdebug, the binary
// serves net/http/pprof on the address in PARLEY_PPROF (a loopback
// HOST:PORT), beside whatever it runs, so that `parley serve` under load
// can be profiled as it runs. Ordinary builds leave this file out and have
// no such listener.

package main

import (
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	if addr := os.Getenv("PARLEY_PPROF"); addr != "" {
		go http.ListenAndServe(addr, nil)
	}
}
