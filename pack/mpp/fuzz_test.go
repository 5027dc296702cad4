package mpp

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/pack"
)

// FuzzVerifyPackage: a package manifest, signature and part of any bytes never panic the
// verifier, and a changed manifest never verifies against the signature made for the original.
func FuzzVerify(f *testing.F) {
	res, err := pack.Pack(pack.Inputs{Records: []pack.File{{Name: "c.jsonl", Data: []byte(`{"id":"a","content_text":"x"}`)}}}, pack.Options{Source: pack.ClaimsJSONL})
	if err != nil {
		f.Fatal(err)
	}
	in := pack.Inputs{Records: []pack.File{{Name: "c.jsonl", Data: []byte(`{"id":"a","content_text":"x"}`)}}}
	built, err := Build(res, in, []*pack.Submission{res.Submission}, Options{ID: "urn:uuid:fuzz", Revision: 1, KeepNames: true, CaptureTime: time.Unix(1e9, 0), TargetCriteriaID: "c"})
	if err != nil {
		f.Fatal(err)
	}
	sig, _ := SignManifest(built.Files[ManifestName], nil)
	f.Add(built.Files[ManifestName], sig, built.Files["submission.json"])
	f.Fuzz(func(t *testing.T, manifest, sigb, part []byte) {
		files := map[string][]byte{ManifestName: manifest, SignatureName: sigb, "submission.json": part, InventoryName: built.Files[InventoryName]}
		v := Verify(files, nil, map[string][]byte{"c.jsonl": in.Records[0].Data})
		if !bytes.Equal(manifest, built.Files[ManifestName]) && bytes.Equal(sigb, sig) && len(v.Mismatches) == 0 {
			t.Fatal("a changed manifest verified against the original signature file")
		}
		if v.Manifest != nil {
			_ = CheckReport(v.Manifest, part, "")
		}
	})
}

// FuzzCheckReport: a report of any bytes never panics the check, and a clean result names a
// part that holds every id the report names.
func FuzzCheckReport(f *testing.F) {
	m := &Manifest{TargetCriteriaID: "c", Family: "generic", Form: "full_text", Variant: "claim-jsonl",
		Records: []Record{{ID: "a", Part: "p1"}, {ID: "b", Part: "p1"}, {ID: "c", Part: "p2"}}}
	f.Add([]byte(`{"criteria_id":"c","family":"generic","form":"full_text","variant":"claim-jsonl","records":2,"factors":{"duplicates":{"clusters":[{"members":["a","b"]}]}}}`))
	f.Add([]byte(`{"records":1,"factors":{"scope_conflicts":{"records":{"history_scope":["c"]}},"cross_scope_clusters":{"clusters":[{"members":[{"id":"c"}]}]}}}`))
	f.Fuzz(func(t *testing.T, report []byte) {
		rc := CheckReport(m, report, "")
		if len(rc.Mismatches) > 0 {
			return
		}
		var r struct {
			Factors json.RawMessage `json:"factors"`
		}
		_ = json.Unmarshal(report, &r)
		for _, id := range ReportRecordIDs(r.Factors) {
			found := false
			for _, rec := range m.Records {
				found = found || (rec.ID == id && rec.Part == rc.Part)
			}
			if !found {
				t.Fatalf("clean check, but id %q is not in part %s", id, rc.Part)
			}
		}
	})
}
