// Command gencorpus writes the oracle's corpus (cases/<name>.json and index.json)
// to a directory, /work/main/corpus by default.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/scopehygiene/scope-hygiene/gen"
)

func main() {
	out := flag.String("o", "/work/main/corpus", "output directory")
	flag.Parse()
	if err := gen.WriteCorpus(*out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cases, err := gen.Corpus()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	idx, err := gen.MakeIndex(cases)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%d cases, pin %s\n", len(cases), idx.SHA256)
}
