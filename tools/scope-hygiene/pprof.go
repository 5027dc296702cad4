//go:build pprof

// The profiler, for measuring the server under load (tools/loadbench -pprof). It exists only in
// a binary built with -tags pprof, never in the shipped one, and listens on the loopback address
// SCOPE_HYGIENE_PPROF_ADDR (nothing when unset): the profiles show code, never export content,
// but they are an operator's tool and stay off the service's port.

package main

import (
	"net"
	"net/http"
	"net/http/pprof"
	"os"
)

func init() {
	addr := os.Getenv("SCOPE_HYGIENE_PPROF_ADDR")
	if addr == "" {
		return
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		return // loopback only
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return
	}
	go http.Serve(ln, mux) //nolint:errcheck // a profiling aid: it ends with the process
}
