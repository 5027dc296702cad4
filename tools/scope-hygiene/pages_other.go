//go:build !linux

package main

// dropStartPages does nothing off Linux (see pages_linux.go).
func dropStartPages() error { return nil }
