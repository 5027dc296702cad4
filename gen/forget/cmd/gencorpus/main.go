// Command gencorpus writes the forget-envelope oracle's corpus, or checks case files
// written by others against the oracle.
//
//	go run ./gen/forget/cmd/gencorpus [-o DIR] [-hand DIR]   write DIR/cases/oracle-*.json (and the verified hand cases)
//	go run ./gen/forget/cmd/gencorpus -check DIR              recompute every case file in DIR; exit 1 on any difference
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/scopehygiene/scope-hygiene/gen/forget"
)

func main() {
	out := flag.String("o", "corpus/forget-envelope", "corpus directory whose cases/ to write")
	hand := flag.String("hand", "", "directory of hand-derived cases to verify and copy into cases/ (optional)")
	check := flag.String("check", "", "directory of case files to check against the oracle (writes nothing)")
	flag.Parse()
	if *check != "" {
		os.Exit(runCheck(*check))
	}
	names, err := forget.WriteCorpus(*out, *hand)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%d cases written to %s/cases (index and pin: rules pin --criteria criteria/forget-envelope.yaml --reindex --write)\n", len(names), *out)
}

func runCheck(dir string) int {
	cases, err := forget.ReadCaseDir(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	differ := 0
	for _, c := range cases {
		d, err := forget.Diff(c)
		if err != nil {
			fmt.Printf("%s: cannot be submitted: %v\n", c.Name, err)
			differ++
			continue
		}
		if len(d) == 0 {
			continue
		}
		differ++
		fmt.Printf("%s: %d member(s) differ\n", c.Name, len(d))
		for _, line := range d {
			fmt.Printf("  %s\n", line)
		}
	}
	fmt.Printf("%d case(s) checked, %d agree, %d differ\n", len(cases), len(cases)-differ, differ)
	if differ > 0 {
		return 1
	}
	return 0
}
