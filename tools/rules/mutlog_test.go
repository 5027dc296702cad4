package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	fePath   = "../../criteria/forget-envelope.yaml"
	feCorpus = "../../corpus/forget-envelope"
)

// TestMutLogCommands: check, test --coverage, audit and pin work on a criteria file of kind
// mutation-log, selected by its kind; a copy whose data changes a decision fails its corpus.
func TestMutLogCommands(t *testing.T) {
	if code, out, errs := runCLI(t, "check", fePath); code != 0 || !strings.Contains(out, "memory-forget-envelope/v1 revision") {
		t.Fatalf("check: %d %s %s", code, out, errs)
	}
	code, out, errs := runCLI(t, "test", "--criteria", fePath, "--corpus", feCorpus, "--coverage")
	if code != 0 || !strings.Contains(out, ", 0 failed") || !strings.Contains(out, "rules seen both ways: 26/26") {
		t.Fatalf("test: %d %s %s", code, out, errs)
	}
	cs := filepath.Join(feCorpus, "cases", "FE-R-24-alias-by-case-and-space.json")
	if code, out, _ := runCLI(t, "audit", "--criteria", fePath, cs); code != 0 || !strings.Contains(out, "alias reinserts: 1") || !strings.Contains(out, "the engine gives the expected output") {
		t.Fatalf("audit of a case: %d %s", code, out)
	}
	if code, out, _ := runCLI(t, "pin", "--criteria", fePath, "--corpus", feCorpus); code != 0 || !strings.HasPrefix(out, "memory-forget-envelope-corpus/v1 ") {
		t.Fatalf("pin: %d %s", code, out)
	}
	src, err := os.ReadFile(fePath)
	if err != nil {
		t.Fatal(err)
	}
	mut := strings.Replace(string(src), "alias: event.raw_key != forget.raw_key", "alias: event.raw_key == forget.raw_key", 1)
	mp := filepath.Join(t.TempDir(), "forget-envelope.yaml")
	if err := os.WriteFile(mp, []byte(mut), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, "test", "--criteria", mp, "--corpus", feCorpus); code != exitCorpus || !strings.Contains(out, "FAIL FE-R-24-alias-by-case-and-space") {
		t.Fatalf("a mutant passed: %d %.400s", code, out)
	}
}
