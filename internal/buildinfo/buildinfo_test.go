package buildinfo

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scopehygiene/scope-hygiene/rules"
)

type fakeCriteria struct{}

func (fakeCriteria) ID() string       { return "memory-scope-hygiene/v1" }
func (fakeCriteria) Revision() string { return "1.0.1" }
func (fakeCriteria) Digest() string   { return "sha256:00ff" }

func TestFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want Info
	}{
		{"stamped release", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/scopehygiene/scope-hygiene", Version: "v1.2.3"},
			Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "7eb6ded0"}, {Key: "vcs.time", Value: "2026-12-01T08:00:00Z"}, {Key: "vcs.modified", Value: "false"}}},
			Info{Tool: "rules", Module: "github.com/scopehygiene/scope-hygiene", Version: "v1.2.3", Revision: "7eb6ded0", RevisionTime: "2026-12-01T08:00:00Z",
				GoVersion: "go1.26.8", CriteriaID: "memory-scope-hygiene/v1", CriteriaRevision: "1.0.1", CriteriaDigest: "sha256:00ff"}},
		{"modified tree", &debug.BuildInfo{Main: debug.Module{Path: "m", Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}},
			Info{Tool: "rules", Module: "m", Version: "(devel)", Revision: "abc", RevisionTime: unknown, Modified: true, GoVersion: unknown,
				CriteriaID: "memory-scope-hygiene/v1", CriteriaRevision: "1.0.1", CriteriaDigest: "sha256:00ff"}},
		{"no build info", nil, Info{Tool: "rules", Module: unknown, Version: unknown, Revision: unknown, RevisionTime: unknown, GoVersion: unknown,
			CriteriaID: "memory-scope-hygiene/v1", CriteriaRevision: "1.0.1", CriteriaDigest: "sha256:00ff"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, FromBuildInfo("rules", tc.bi, fakeCriteria{})); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// TestPrintNamesTheEmbeddedCriteria: -version states the criteria the binary really carries.
func TestPrintNamesTheEmbeddedCriteria(t *testing.T) {
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Print("pack", &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"tool               pack\n", "criteria           " + ps.ID() + "\n",
		"criteria revision  " + ps.Revision() + "\n", "criteria digest    " + ps.Digest() + "\n", "module             github.com/scopehygiene/scope-hygiene\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-version output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestWriteMarksAModifiedTree(t *testing.T) {
	var b bytes.Buffer
	if err := (Info{Revision: "abc", Modified: true}).Write(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "vcs revision       abc (modified working tree)\n") {
		t.Errorf("got:\n%s", b.String())
	}
}
