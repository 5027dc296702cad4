package pin

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/corpus"
)

const (
	criteriaPath = "../../../../criteria.yaml"
	corpusPath   = "../../../../corpus"
	feCorpus     = "../../../../corpus/forget-envelope"
)

// TestOf: the repository's corpus has a verified pin; a directory without a corpus is the
// corpus's failure, not a file error.
func TestOf(t *testing.T) {
	c, sum, err := Of(corpusPath)
	if err != nil || sum == "" || sum != c.Index.SHA256 {
		t.Fatalf("%q %v", sum, err)
	}
	var ce *CorpusError
	if _, _, err := Of(t.TempDir()); !errors.As(err, &ce) {
		t.Fatalf("no corpus: %v", err)
	}
}

// TestWrite: the pin replaces the corpus block's sha256 line and nothing else; a file without
// that line is refused as it is.
func TestWrite(t *testing.T) {
	src, err := os.ReadFile(criteriaPath)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "criteria.yaml")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, "0123"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !strings.Contains(string(got), "\n  sha256: \"0123\"") || len(got) >= len(src) {
		t.Fatalf("pin not written (%d bytes, was %d)", len(got), len(src))
	}
	if err := os.WriteFile(path, []byte("id: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, "0123"); err == nil || !strings.HasSuffix(err.Error(), "has no corpus sha256 line to update") {
		t.Fatalf("no pin line: %v", err)
	}
}

// TestReindex: re-indexing a copy of the mutation-log corpus gives back its index as committed.
func TestReindex(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(feCorpus)); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(feCorpus, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx corpus.Index
	if err := json.Unmarshal(want, &idx); err != nil {
		t.Fatal(err)
	}
	if err := Reindex(dir, corpus.Index{ID: idx.ID, CriteriaID: idx.CriteriaID, CriteriaRevision: idx.CriteriaRevision}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "index.json"))
	if string(got) != string(want) {
		t.Fatalf("index differs:\n%.400s", got)
	}
}
