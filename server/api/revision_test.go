package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestServedRevisionsCarryTheirDigests (issue 25): each criteria document the server publishes
// names the revision in its file and the SHA-256 of that file's bytes, and publishes the readings
// that revision added.
func TestServedRevisionsCarryTheirDigests(t *testing.T) {
	h := newHarness(t, sqliteStore(t), withForgetEnvelope(t))
	for _, c := range []struct {
		route, file, revision string
		readings              []string
	}{
		{"/criteria/memory-scope-hygiene/v1", "../../criteria.yaml", "1.0.2", []string{"R-54", "R-55"}},
		{"/criteria/memory-forget-envelope/v1", "../../criteria/forget-envelope.yaml", "1.0.1", []string{"FE-R-35", "FE-R-36", "FE-R-37", "FE-R-38", "FE-R-39"}},
	} {
		src, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(src)
		r := h.do(http.MethodGet, c.route, nil, nil)
		var doc struct {
			Revision        string `json:"criteria_revision"`
			Digest          string `json:"criteria_digest"`
			Interpretations []struct {
				ID string `json:"id"`
			} `json:"interpretations"`
		}
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &doc) != nil {
			t.Fatalf("%s: %d", c.route, r.Status)
		}
		if doc.Revision != c.revision || doc.Digest != "sha256:"+hex.EncodeToString(sum[:]) {
			t.Errorf("%s serves revision %s digest %s, want %s of %s", c.route, doc.Revision, doc.Digest, c.revision, c.file)
		}
		var ids []string
		for _, i := range doc.Interpretations {
			ids = append(ids, i.ID)
		}
		for _, want := range c.readings {
			if !strings.Contains(" "+strings.Join(ids, " ")+" ", " "+want+" ") {
				t.Errorf("%s does not publish reading %s", c.route, want)
			}
		}
	}
}
