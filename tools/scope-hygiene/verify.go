package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/scopehygiene/scope-hygiene/server/sign"
)

func verify(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	key := fs.String("key", "", "the published key: a saved GET /criteria document, a PEM public key, or the key file")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: scope-hygiene verify -key <criteria.json|key.pem> <result.json>\n\n"+
			"Checks a saved signed result byte for byte (as the service sent it) against the key.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *key == "" || fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	pub, err := sign.ReadPublicKey(*key)
	if err != nil {
		fmt.Fprintln(stderr, "FAIL:", err)
		return 1
	}
	doc, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "FAIL:", err)
		return 1
	}
	b, err := sign.Verify(doc, pub)
	if err != nil {
		fmt.Fprintln(stderr, "FAIL:", err)
		return 1
	}
	fmt.Fprintf(stdout, "OK %s key_id=%s\n", b.Alg, b.KeyID)
	return 0
}
