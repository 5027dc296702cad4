//go:build !linux

package main

// deferAccept does nothing off Linux (listen.go).
func deferAccept(uintptr, int) error { return nil }
