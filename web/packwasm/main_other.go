//go:build !(js && wasm)

package main

import (
	"fmt"
	"os"
)

// main explains the build: this command only runs in a browser.
func main() {
	fmt.Fprintln(os.Stderr, "packwasm runs in the web page: build it with GOOS=js GOARCH=wasm (go generate ./web)")
	os.Exit(2)
}
