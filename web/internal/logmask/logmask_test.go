package logmask

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/rules"
)

var salt = []byte("logmask-test-salt")

func mask(t *testing.T, body string) string {
	t.Helper()
	out, _, err := Mask([]byte(body), salt)
	if err != nil {
		t.Fatalf("Mask: %v", err)
	}
	return string(out)
}

// TestMaskedLogAgrees runs every case of the rule set's corpus through the engine twice, as
// submitted and masked with two different salts: the refusal, the pre-check and the audit (every
// factor, coverage count and the verdict) are the same. A log Mask refuses is one the service
// refuses under export_required.
func TestMaskedLogAgrees(t *testing.T) {
	src, err := os.ReadFile("../../../criteria/forget-envelope.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := rules.LoadMutationLog("forget-envelope.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	c, err := corpus.Load(os.DirFS("../../../corpus/forget-envelope"))
	if err != nil {
		t.Fatal(err)
	}
	compared, refusedHere := 0, 0
	for _, cs := range c.Cases {
		body, err := cs.RequestBody()
		if err != nil {
			t.Fatal(err)
		}
		want, err := corpus.OutcomeMutLog(ms, body, nil)
		if err != nil {
			t.Fatalf("%s: %v", cs.Name, err)
		}
		masked, _, err := Mask(body, salt)
		if err != nil {
			if ref, _ := want["refusal"].(map[string]any); ref == nil || ref["rule"] != "export_required" {
				t.Errorf("%s: refused here (%v), the service answers %v", cs.Name, err, want)
			}
			refusedHere++
			continue
		}
		if ref, _ := want["refusal"].(map[string]any); ref != nil && ref["rule"] == "export_required" {
			t.Errorf("%s: the service refuses it under export_required, Mask prepared it", cs.Name)
			continue
		}
		if len(body) > 262144 || len(masked) > 262144 {
			continue // the byte cap reads the body's length, which masking changes
		}
		other, _, _ := Mask(body, []byte("another salt"))
		for _, m := range [][]byte{masked, other} {
			got, err := corpus.OutcomeMutLog(ms, m, nil)
			if err != nil {
				t.Fatalf("%s masked: %v", cs.Name, err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s: the masked log's outcome differs (-submitted +masked):\n%s", cs.Name, d)
			}
		}
		compared++
	}
	t.Logf("%d cases agree masked, %d refused here as the service does (export_required)", compared, refusedHere)
	if compared < len(c.Cases)/2 {
		t.Fatalf("only %d of %d cases compared", compared, len(c.Cases))
	}
}

// The worked example of docs/forget-envelope.md with a canary in every identifier.
const canaryLog = `{"format":"mutation-log","forget_mode":"transitional","scope_dimensions":["tenant","agent","session"],
 "caller":"canary-caller-Wallet","note":"canary-unknown-member",
 "principals":[{"id":"canary-owner","grants":[{"tenant":"canary-Tenant","agent":"canary-7","session":"canary-s1"}],"email":"canary-email"},
               {"id":"canary-other","grants":[{"tenant":"canary-Tenant","agent":"canary-7"}]}],
 "events":[
  {"seq":1,"op":"write","key":{"scope":{"tenant":"canary-Tenant","agent":"canary-7","session":"canary-s1"},"name":"canary-pref"},"principal":"canary-owner","version":1,"value":"canary-stored-value"},
  {"seq":2,"op":"forget","key":{"scope":{"tenant":"canary-Tenant","agent":"canary-7","session":"canary-s1"},"name":"canary-pref"},"principal":"canary-owner","envelope":["canary-owner"]},
  {"seq":3,"op":"reassign","session":{"tenant":"canary-Tenant","agent":"canary-7","session":"canary-s1"},"principal":"canary-other","to":"canary-other"},
  {"seq":4,"op":"write","key":{"scope":{"tenant":"canary-tenant","agent":"canary-7","session":"canary-s1"},"name":" canary-Pref"},"principal":"canary-other","version":2.0e0}],
 "snapshot":[{"key":{"scope":{"tenant":"canary-Tenant","agent":"canary-7","session":"canary-s1"},"name":"canary-pref"},"version":1}]}`

func TestNoIdentifierLeaves(t *testing.T) {
	out, sum, err := Mask([]byte(canaryLog), salt)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(bytes.ToLower(out), []byte("canary")) {
		t.Fatalf("a canary left: %s", out)
	}
	for _, kept := range []string{`"scope_dimensions":["tenant","agent","session"]`, `"op":"reassign"`, `"forget_mode":"transitional"`, `"version":2.0e0`} {
		if !bytes.Contains(out, []byte(kept)) {
			t.Errorf("%s not kept", kept)
		}
	}
	if sum.Events != 4 || sum.Dropped != 4 || sum.ScopeLabels != 3 {
		t.Errorf("summary %+v", sum)
	}
	// owner, other, Tenant, tenant, 7, s1, pref and " canary-Pref".
	if sum.Masked != 8 {
		t.Errorf("%d strings masked", sum.Masked)
	}
}

func TestPseudonymRelations(t *testing.T) {
	m := &masker{salt: salt, seen: map[string]bool{}}
	p := m.pseudonym
	for _, c := range []struct {
		a, b               string
		sameExact, sameCan bool
	}{
		{"Pref", "Pref", true, true},
		{"Pref", "pref", false, true},
		{" pref\t", "pref", false, true},
		{"pref", "prefs", false, false},
		{"É", "é", false, false}, // only A-Z fold (FE-R-12)
		{"", "", true, true},
		{"  ", "", false, true},
		{"  ", "\t", false, true},
	} {
		pa, pb := p(c.a), p(c.b)
		if (pa == pb) != c.sameExact || (canonical(pa) == canonical(pb)) != c.sameCan {
			t.Errorf("%q %q → %q %q: exact %v canonical %v", c.a, c.b, pa, pb, pa == pb, canonical(pa) == canonical(pb))
		}
		if c.a != "" && strings.TrimSpace(c.a) != "" && (len(pa) != 52 || strings.Trim(pa, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "") {
			t.Errorf("pseudonym %q", pa)
		}
	}
	if p("pref") == (&masker{salt: []byte("other"), seen: map[string]bool{}}).pseudonym("pref") {
		t.Error("the salt does not key the pseudonym")
	}
}

func TestRefusedHere(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65)
	for _, c := range []struct {
		name, body string
		want       error
	}{
		{"bom", "\xef\xbb\xbf{}", ErrBOM},
		{"array", `[1]`, ErrNotObject},
		{"trailing", `{} {}`, ErrNotJSON},
		{"duplicate", `{"events":[{"seq":1,"seq":2}]}`, ErrDuplicate},
		{"lone high", `{"a":"\ud800x"}`, ErrSurrogate},
		{"lone low", `{"a":"\udc00"}`, ErrSurrogate},
		{"not utf8", "{\"a\":\"\xff\"}", ErrNotUTF8},
		{"garbage", `{"a":`, ErrNotJSON},
	} {
		if _, _, err := Mask([]byte(c.body), salt); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, _, err := Mask([]byte(deep), salt); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Errorf("65 levels: %v", err)
	}
	if _, _, err := Mask([]byte(strings.Repeat(`{"a":`, 64)+"1"+strings.Repeat("}", 64)), salt); err != nil {
		t.Errorf("64 levels: %v", err)
	}
	if out := mask(t, `{"a":"\ud83d\ude00","b":"\\ud800"}`); !json.Valid([]byte(out)) {
		t.Errorf("a surrogate pair or an escaped backslash is refused: %s", out)
	}
}

func FuzzMask(f *testing.F) {
	f.Add([]byte(canaryLog))
	f.Add([]byte(`{"events":[{"seq":1,"op":"write","key":{"scope":{},"name":""}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, _, err := Mask(data, salt)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("masked log is not JSON: %q", out)
		}
		again, _, err := Mask(out, salt)
		if err != nil || !json.Valid(again) {
			t.Fatalf("the masked log does not mask again: %v", err)
		}
	})
}

// TestDeclarationsPassUnmasked: the masker keeps the criteria's declarations (FE-R-34, FE-R-38) as
// the published words they are: the declaring member and its exact value pass through, any other
// value is masked. The masker runs in the page's WebAssembly module without the criteria, so its
// words are written in Go; this test holds them to the criteria's data.
func TestDeclarationsPassUnmasked(t *testing.T) {
	src, err := os.ReadFile("../../../criteria/forget-envelope.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := rules.LoadMutationLog("forget-envelope.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms.Declared()) == 0 {
		t.Fatal("the criteria declare no facts")
	}
	for _, d := range ms.Declared() {
		member, _ := json.Marshal(d.Member)
		for _, v := range []string{d.Value, d.Value + "-not-the-word"} {
			value, _ := json.Marshal(v)
			body := `{"format":"mutation-log","forget_mode":"transitional","scope_dimensions":["t"],` + string(member) + `:` + string(value) +
				`,"events":[{"seq":1,"op":"write","key":{"scope":{"t":"A"},"name":"n"},"version":1}]}`
			out := mask(t, body)
			kept := strings.Contains(out, string(member)+`:`+string(value))
			if kept != (v == d.Value) {
				t.Errorf("%s %s: kept %v in %s", d.Member, v, kept, out)
			}
		}
	}
}
