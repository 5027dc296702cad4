package gen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

// committedCorpus is the corpus committed at the repository root.
const committedCorpus = "../corpus"

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		// Only the oracle's files: index.json and cases/*.json (the corpus
		// directory also holds the harness package, which is not ours).
		if rel != "index.json" && !(strings.HasPrefix(rel, "cases"+string(filepath.Separator)) && strings.HasSuffix(rel, ".json")) {
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return out
}

func TestWriteCorpusDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if err := WriteCorpus(a); err != nil {
		t.Fatal(err)
	}
	if err := WriteCorpus(b); err != nil {
		t.Fatal(err)
	}
	ta, tb := readTree(t, a), readTree(t, b)
	if len(ta) != len(tb) {
		t.Fatalf("file counts differ: %d vs %d", len(ta), len(tb))
	}
	for name, content := range ta {
		if !bytes.Equal(content, tb[name]) {
			t.Errorf("%s differs between two runs", name)
		}
	}
}

// TestCommittedCorpusIsCurrent fails when corpus/ is stale: regenerate it with
// `go run ./gen/cmd/gencorpus`.
func TestCommittedCorpusIsCurrent(t *testing.T) {
	fresh := t.TempDir()
	if err := WriteCorpus(fresh); err != nil {
		t.Fatal(err)
	}
	want, got := readTree(t, fresh), readTree(t, committedCorpus)
	for name, content := range want {
		if !bytes.Equal(content, got[name]) {
			t.Errorf("corpus/%s is stale or missing", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("corpus/%s is not produced by Corpus()", name)
		}
	}
}

func TestCommittedCorpusPinVerifies(t *testing.T) {
	idx, cases, err := ReadCorpus(os.DirFS(committedCorpus))
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyPin(idx, cases); err != nil {
		t.Fatal(err)
	}
	if idx.ID != CorpusID || idx.CriteriaID != CriteriaID || idx.CriteriaRevision != CriteriaRevision {
		t.Fatalf("index identity fields are wrong")
	}
	// A change in any case breaks the pin.
	mutated := append([]Case{}, cases...)
	mutated[0].Rules = append(append([]string{}, mutated[0].Rules...), "extra")
	if err := VerifyPin(idx, mutated); err == nil {
		t.Fatalf("a mutated corpus still verifies")
	}
	// The same pin computed from the raw case files (as a harness holding the
	// files as json.RawMessage would compute it).
	obj := struct {
		ID               string            `json:"id"`
		CriteriaID       string            `json:"criteria_id"`
		CriteriaRevision string            `json:"criteria_revision"`
		Cases            []json.RawMessage `json:"cases"`
	}{ID: idx.ID, CriteriaID: idx.CriteriaID, CriteriaRevision: idx.CriteriaRevision}
	for _, name := range idx.Cases {
		b, err := os.ReadFile(filepath.Join(committedCorpus, "cases", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		obj.Cases = append(obj.Cases, b)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	canon, err := jcs.Transform(raw)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(canon)
	if hex.EncodeToString(sum[:]) != idx.SHA256 {
		t.Fatalf("pin over the raw case files differs from the index")
	}
}

func TestCorpusShape(t *testing.T) {
	cases, err := Corpus()
	if err != nil {
		t.Fatal(err)
	}
	byProv := map[string]int{}
	refusals := map[string]bool{}
	families := map[string]bool{}
	for _, c := range cases {
		byProv[c.Provenance]++
		if len(c.Rules) == 0 || (c.Name != c.Rules[0] && !strings.HasPrefix(c.Name, c.Rules[0]+"-")) {
			t.Errorf("case %s does not start with its main rule id", c.Name)
		}
		body, err := c.SubmittedBytes()
		if err != nil {
			t.Fatalf("case %s: %v", c.Name, err)
		}
		e, err := Expect(body)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(e, c.Expected) {
			t.Errorf("case %s: stored expected differs from Expect", c.Name)
		}
		if e.Refusal != nil {
			refusals[e.Refusal.Rule] = true
		} else {
			families[e.Audit.Family+"/"+e.Audit.Form+"/"+e.Audit.Variant] = true
		}
	}
	if len(cases) < 300 || byProv[ProvenanceEdge] == 0 || byProv[ProvenanceGenerated] == 0 {
		t.Fatalf("corpus too small: %v", byProv)
	}
	for _, r := range RefusalRules {
		if !refusals[r] {
			t.Errorf("no case refuses with %s", r)
		}
	}
	for fam, variants := range familyVariants {
		for _, form := range formOrder {
			for _, v := range variants {
				if !families[fam+"/"+form+"/"+v] {
					t.Errorf("no accepted case for %s/%s/%s", fam, form, v)
				}
			}
		}
	}
}

func TestReadCorpusRejectsNonCanonicalFile(t *testing.T) {
	dir := t.TempDir()
	if err := WriteCorpus(dir); err != nil {
		t.Fatal(err)
	}
	idx, _, err := ReadCorpus(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "cases", idx.Cases[0]+".json")
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(b, ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadCorpus(os.DirFS(dir)); err == nil {
		t.Fatal("a non-canonical case file was accepted")
	}
}
