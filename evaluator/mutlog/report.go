package mutlog

import (
	"strconv"
	"strings"
	"time"

	"github.com/scopehygiene/scope-hygiene/rules"
)

// Status is a factor's assessability: ASSESSABLE, or NOT ASSESSABLE with its reason.
type Status struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// PrecheckResult is the free pre-check answer (docs/forget-envelope.md).
type PrecheckResult struct {
	Kind             string            `json:"kind"`
	Service          string            `json:"service"`
	CriteriaID       string            `json:"criteria_id"`
	CriteriaRevision string            `json:"criteria_revision"`
	CriteriaDigest   string            `json:"criteria_digest"`
	Op               string            `json:"op"`
	ForgetMode       string            `json:"forget_mode"`
	Events           int               `json:"events"`
	Factors          map[string]Status `json:"factors"`
	CheckedAt        string            `json:"checked_at"`
}

// Rate is a percentage to one decimal with both counts (FE-R-32).
type Rate struct {
	Numerator   int    `json:"numerator"`
	Denominator int    `json:"denominator"`
	Value       string `json:"value"`
}

// ForgetEnvelopes is factor (1).
type ForgetEnvelopes struct {
	Status          string  `json:"status"`
	Forgets         int     `json:"forgets"`
	WithEnvelope    int     `json:"with_envelope"`
	WithoutEnvelope []int64 `json:"without_envelope"`
	Rate            Rate    `json:"rate"`
}

// Reinserts is factor (2).
type Reinserts struct {
	Status    string  `json:"status"`
	Reinserts int     `json:"reinserts"`
	Seqs      []int64 `json:"seqs"`
}

// OutsideEnvelope is factor (3). Outside and Silent are each a count, or a Status when their fact
// gate holds (FE-R-35, FE-R-37); their seqs are then left out.
type OutsideEnvelope struct {
	Status     string `json:"status"`
	Reinserts  int    `json:"reinserts"`
	Checked    int    `json:"checked"`
	NoEnvelope int    `json:"no_envelope"`
	// Judged and Unjudged are printed when the criteria gate a fact of this factor on them
	// (FE-R-37): the counts a fact gate reads stand beside the fact.
	Judged           *int     `json:"judged,omitempty"`
	Unjudged         *int     `json:"unjudged,omitempty"`
	Outside          any      `json:"outside"`
	Silent           any      `json:"silent"`
	Unattributed     int      `json:"unattributed"`
	OutsideSeqs      *[]int64 `json:"outside_seqs,omitempty"`
	SilentSeqs       *[]int64 `json:"silent_seqs,omitempty"`
	UnattributedSeqs []int64  `json:"unattributed_seqs"`
}

// Aliases is factor (4).
type Aliases struct {
	Status    string  `json:"status"`
	Reinserts int     `json:"reinserts"`
	Aliases   int     `json:"aliases"`
	Seqs      []int64 `json:"seqs"`
}

// Reopens is factor (5).
type Reopens struct {
	Status           string  `json:"status"`
	Reopens          int     `json:"reopens"`
	Unchecked        int     `json:"unchecked"`
	UncheckedSeqs    []int64 `json:"unchecked_seqs"`
	RetiredWrites    int     `json:"retired_writes"`
	RetiredWriteSeqs []int64 `json:"retired_write_seqs"`
}

// Reassignments is factor (6).
type Reassignments struct {
	Status        string  `json:"status"`
	Reassignments int     `json:"reassignments"`
	Unchecked     int     `json:"unchecked"`
	UncheckedSeqs []int64 `json:"unchecked_seqs"`
}

// Replay is factor (7).
type Replay struct {
	Status           string  `json:"status"`
	LiveSlots        int     `json:"live_slots"`
	SnapshotEntries  int     `json:"snapshot_entries"`
	Mismatches       int     `json:"mismatches"`
	Missing          int     `json:"missing"`
	Extra            int     `json:"extra"`
	Version          int     `json:"version"`
	Duplicate        int     `json:"duplicate"`
	MissingSeqs      []int64 `json:"missing_seqs"`
	ExtraIndexes     []int   `json:"extra_indexes"`
	VersionIndexes   []int   `json:"version_indexes"`
	DuplicateIndexes []int   `json:"duplicate_indexes"`
}

// Factors holds each factor: its ASSESSABLE struct, or a Status when NOT ASSESSABLE.
type Factors struct {
	ForgetEnvelopes          any `json:"forget_envelopes"`
	ReinsertsAfterForget     any `json:"reinserts_after_forget"`
	ReinsertsOutsideEnvelope any `json:"reinserts_outside_envelope"`
	AliasReinserts           any `json:"alias_reinserts"`
	Reopens                  any `json:"reopens"`
	Reassignments            any `json:"reassignments"`
	Replay                   any `json:"replay"`
}

// Coverage says what the log held beside the factors (FE-R-33).
type Coverage struct {
	ScopeDimensions    []string `json:"scope_dimensions"`
	Canonicalization   []string `json:"canonicalization"`
	Slots              int      `json:"slots"`
	AliasedSlots       int      `json:"aliased_slots"`
	ForgetsOfNotLive   int      `json:"forgets_of_not_live"`
	ReopensIneffective int      `json:"reopens_ineffective"`
	UnattributedEvents int      `json:"unattributed_events"`
	Principals         int      `json:"principals"`
	LiveSlots          int      `json:"live_slots"`
}

// Report is the audit report (docs/forget-envelope.md).
type Report struct {
	Kind             string   `json:"kind"`
	Service          string   `json:"service"`
	CriteriaID       string   `json:"criteria_id"`
	CriteriaRevision string   `json:"criteria_revision"`
	CriteriaDigest   string   `json:"criteria_digest"`
	Op               string   `json:"op"`
	ForgetMode       string   `json:"forget_mode"`
	Events           int      `json:"events"`
	Forgets          int      `json:"forgets"`
	VerdictLine      string   `json:"verdict_line"`
	CheckEnd         string   `json:"check_end"`
	ScopeStatement   string   `json:"scope_statement"`
	HonestyLine      string   `json:"honesty_line"`
	Factors          Factors  `json:"factors"`
	Coverage         Coverage `json:"coverage"`

	// The verdict's figures, absent when the factor is NOT ASSESSABLE.
	verdict map[string]string
	// doesNotApply is the reason of the does_not_apply gate that holds ("" when the rules apply).
	doesNotApply string
}

// rate is a percent to one decimal, half up, in integers (FE-R-32); den is never zero here.
func rate(num, den int) Rate {
	tenths := (2000*num + den) / (2 * den)
	return Rate{Numerator: num, Denominator: den, Value: strconv.Itoa(tenths/10) + "." + strconv.Itoa(tenths%10) + "%"}
}

func timestamp(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

// Stamp sets a report's check-end time and the verdict line that prints it.
func Stamp(ms *rules.MutLogSet, rep *Report, checkEnd time.Time) {
	w := ms.Criteria().Words
	rep.CheckEnd = timestamp(checkEnd)
	fig := func(k string) string {
		if v, ok := rep.verdict[k]; ok {
			return v
		}
		return w.NotAssessable
	}
	events, forgets := strconv.Itoa(rep.Events), strconv.Itoa(rep.Forgets)
	if rep.doesNotApply != "" {
		rep.VerdictLine = fill(w.VerdictDoesNotApply, func(name string) (string, bool) {
			switch name {
			case "events":
				return events, true
			case "forgets":
				return forgets, true
			case "does_not_apply":
				return rep.doesNotApply, true
			case "check_end":
				return rep.CheckEnd, true
			}
			return "", false
		})
		return
	}
	rep.VerdictLine = fill(w.Verdict, func(name string) (string, bool) {
		switch name {
		case "events":
			return events, true
		case "forgets":
			return forgets, true
		case "check_end":
			return rep.CheckEnd, true
		case "with_envelope", "reinserts", "outside", "aliases", "unchecked_reopens", "retired_writes",
			"unchecked_reassignments", "mismatches":
			return fig(name), true
		}
		return "", false
	})
}

// fill replaces each {name} of the criteria's template that value knows, in one pass, as a
// strings.Replacer of those names would (no name holds a brace, so at most one matches where a
// brace opens), without building one per report.
func fill(template string, value func(name string) (string, bool)) string {
	var b strings.Builder
	b.Grow(len(template) + 64)
	for {
		i := strings.IndexByte(template, '{')
		if i < 0 {
			b.WriteString(template)
			return b.String()
		}
		b.WriteString(template[:i])
		if j := strings.IndexByte(template[i+1:], '}'); j >= 0 {
			if v, ok := value(template[i+1 : i+1+j]); ok {
				b.WriteString(v)
				template = template[i+1+j+1:]
				continue
			}
		}
		b.WriteByte('{')
		template = template[i+1:]
	}
}
