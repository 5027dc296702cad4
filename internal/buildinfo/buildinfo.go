// Package buildinfo says what a binary is: its module version and VCS revision (as the Go
// toolchain stamped them) and the criteria it carries (id, revision and digest), for every
// tool's -version.
package buildinfo

import (
	"fmt"
	"io"
	"runtime/debug"
	"text/tabwriter"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// Info is what -version prints.
type Info struct {
	Tool             string `json:"tool"`
	Module           string `json:"module"`
	Version          string `json:"version"`
	Revision         string `json:"vcs_revision"`
	RevisionTime     string `json:"vcs_time"`
	Modified         bool   `json:"vcs_modified"`
	GoVersion        string `json:"go_version"`
	CriteriaID       string `json:"criteria_id"`
	CriteriaRevision string `json:"criteria_revision"`
	CriteriaDigest   string `json:"criteria_digest"`
}

// Criteria is what Info needs of the embedded criteria (*rules.ProgramSet has it).
type Criteria interface {
	ID() string
	Revision() string
	Digest() string
}

// unknown stands for a fact the toolchain did not stamp (a test binary, a build outside a
// repository, -buildvcs=false).
const unknown = "unknown"

// FromBuildInfo fills the module and VCS facts from bi (nil: none known) and the criteria facts
// from c.
func FromBuildInfo(tool string, bi *debug.BuildInfo, c Criteria) Info {
	in := Info{Tool: tool, Module: unknown, Version: unknown, Revision: unknown, RevisionTime: unknown, GoVersion: unknown,
		CriteriaID: c.ID(), CriteriaRevision: c.Revision(), CriteriaDigest: c.Digest()}
	if bi == nil {
		return in
	}
	if bi.Main.Path != "" {
		in.Module = bi.Main.Path
	}
	if bi.Main.Version != "" {
		in.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		in.GoVersion = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.RevisionTime = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// Read is the running binary's Info, with the criteria embedded in it.
func Read(tool string) (Info, error) {
	ps, err := rules.Default()
	if err != nil {
		return Info{}, fmt.Errorf("embedded criteria: %w", err)
	}
	bi, _ := debug.ReadBuildInfo()
	return FromBuildInfo(tool, bi, ps), nil
}

// Write prints in as a two-column table for people.
func (in Info) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	rev := in.Revision
	if in.Modified {
		rev += " (modified working tree)"
	}
	for _, row := range [][2]string{
		{"tool", in.Tool},
		{"module", in.Module},
		{"version", in.Version},
		{"vcs revision", rev},
		{"vcs time", in.RevisionTime},
		{"go", in.GoVersion},
		{"criteria", in.CriteriaID},
		{"criteria revision", in.CriteriaRevision},
		{"criteria digest", in.CriteriaDigest},
	} {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
	}
	return tw.Flush()
}

// Print reads the running binary's Info and prints it to w; it returns a process exit code
// (0, or 1 when the embedded criteria do not compile, said on stderr).
func Print(tool string, stdout, stderr io.Writer) int {
	in, err := Read(tool)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", tool, err)
		return 1
	}
	if err := in.Write(stdout); err != nil {
		return 1
	}
	return 0
}
