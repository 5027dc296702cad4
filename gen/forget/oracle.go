package forget

import (
	"sort"
	"strconv"
	"strings"
)

// Published words and texts (criteria `words`, `texts`; docs "The seven factors").
const (
	statusAssessable    = "ASSESSABLE"
	statusNotAssessable = "NOT ASSESSABLE"

	reasonNoForgets    = "no forget events in the log"
	reasonTerminal     = "terminal-forget store: a write back into a retired key is counted as a retired-key write (factor reopens) and judged against its envelope (factor reinserts_outside_envelope)"
	reasonNewKeys      = "trivially satisfied (the seed's words): the export declares that the store gives a re-added record a new key, so no write can reinsert into a forgotten key"
	reasonNoPrincipals = "no principals: the export declares no principal table"
	reasonNoEnvelope   = "no forget records an envelope"
	reasonTransitional = "transitional-forget store: a forget retires no key"
	reasonNoReassigns  = "no session reassignments in the log"
	reasonNoSnapshot   = "no final-state snapshot"
	reasonNoneJudged   = "none judged: no reinsert has both a recorded envelope and a principal"
	reasonDoesNotApply = "does not apply: the export declares a tombstone-only store whose audit log is the sole source of truth, which the seed excludes from these rules"
	verdictHead        = "FORGET ENVELOPE"
	ScopeStatement     = "The report states what the submitted mutation log records, as submitted. It is never a certification of the store and never proof that an escalation did or did not happen at runtime: a reinsert outside the envelope is an escalation indicator under the log's own record of authority."
	HonestyLine        = "Every fact in the report is computed from the one submitted log under the published rules and nothing else: the service contacts no store and fetches nothing. A factor the log cannot support is stated NOT ASSESSABLE with its reason, never printed as a zero and never guessed."
)

// Canonicalization is the criteria's step list (FE-R-12), printed in coverage.
var Canonicalization = []string{"trim_ascii_space", "ascii_lower"}

// FactorNames are the seven factors in the report's order.
var FactorNames = []string{
	"forget_envelopes",
	"reinserts_after_forget",
	"reinserts_outside_envelope",
	"alias_reinserts",
	"reopens",
	"reassignments",
	"replay",
}

// Factor is one factor: {"status", "reason"} when NOT ASSESSABLE, else its status
// and members. A map marshals with sorted members, which keeps files deterministic.
type Factor map[string]any

// Outcome is the expected outcome of one submission (docs, "Corpus"): a refusal, or
// the pre-check and the audit.
type Outcome struct {
	Refusal  *Refusal  `json:"refusal,omitempty"`
	Precheck *Precheck `json:"precheck,omitempty"`
	Audit    *Audit    `json:"audit,omitempty"`
}

// Precheck is the compared part of a pre-check result.
type Precheck struct {
	ForgetMode string            `json:"forget_mode"`
	Events     int               `json:"events"`
	Factors    map[string]Factor `json:"factors"`
}

// Audit is the compared part of an audit report.
type Audit struct {
	ForgetMode     string            `json:"forget_mode"`
	Events         int               `json:"events"`
	Forgets        int               `json:"forgets"`
	VerdictPrefix  string            `json:"verdict_prefix"`
	ScopeStatement string            `json:"scope_statement"`
	HonestyLine    string            `json:"honesty_line"`
	Factors        map[string]Factor `json:"factors"`
	Coverage       Coverage          `json:"coverage"`
}

// Coverage is the report's coverage block (FE-R-33).
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

// Expect computes the expected outcome of the exact request bytes.
func Expect(body []byte) Outcome {
	x, r := validate(body)
	if r != nil {
		return Outcome{Refusal: r}
	}
	gates := x.gates()
	pre := &Precheck{ForgetMode: x.mode, Events: len(x.events), Factors: map[string]Factor{}}
	for _, f := range FactorNames {
		if reason := gates[f]; reason != "" {
			pre.Factors[f] = Factor{"status": statusNotAssessable, "reason": reason}
		} else {
			pre.Factors[f] = Factor{"status": statusAssessable}
		}
	}
	return Outcome{Precheck: pre, Audit: x.audit(gates)}
}

// gates resolves each factor's gates in order (FE-R-30, FE-R-34 … FE-R-39) from the
// log facts counted before replay; the value is the first reason that holds, or "".
// A declared tombstone-only store is outside the seed's scope: every factor says the
// rules do not apply, before any other gate (FE-R-38).
func (x *export) gates() map[string]string {
	forgets, withEnv, reassigns := 0, 0, 0
	for _, e := range x.events {
		switch e.op {
		case OpForget:
			forgets++
			if e.envelopeRecorded {
				withEnv++
			}
		case OpReassign:
			reassigns++
		}
	}
	first := func(conds ...any) string {
		if x.tombstoneOnly {
			return reasonDoesNotApply
		}
		for i := 0; i < len(conds); i += 2 {
			if conds[i].(bool) {
				return conds[i+1].(string)
			}
		}
		return ""
	}
	terminal := x.mode == ModeTerminal
	return map[string]string{
		"forget_envelopes": first(forgets == 0, reasonNoForgets),
		"reinserts_after_forget": first(terminal, reasonTerminal, x.newKeys, reasonNewKeys,
			forgets == 0, reasonNoForgets),
		// No terminal gate (FE-R-36) and no principal-table gate (FE-R-35).
		"reinserts_outside_envelope": first(x.newKeys, reasonNewKeys,
			forgets == 0, reasonNoForgets, withEnv == 0, reasonNoEnvelope),
		"alias_reinserts": first(terminal, reasonTerminal, x.newKeys, reasonNewKeys,
			forgets == 0, reasonNoForgets),
		"reopens":       first(!terminal, reasonTransitional, forgets == 0, reasonNoForgets),
		"reassignments": first(reassigns == 0, reasonNoReassigns),
		"replay":        first(!x.hasSnapshot, reasonNoSnapshot),
	}
}

// canonical applies the criteria's steps in order (FE-R-12): trim_ascii_space, then
// ascii_lower.
func canonical(s string) string {
	s = strings.Trim(s, " \t\n\r")
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// ident encodes a key as a comparable string: per dimension omitted or a
// length-prefixed value, then the name (FE-R-13). With canon it is the slot, without
// it the raw key.
func ident(k key, canon bool) string {
	var sb strings.Builder
	for _, p := range k.parts {
		if !p.present {
			sb.WriteString("-")
			continue
		}
		v := p.value
		if canon {
			v = canonical(v)
		}
		sb.WriteString("+" + strconv.Itoa(len(v)) + ":" + v)
	}
	n := k.name
	if canon {
		n = canonical(n)
	}
	sb.WriteString("#" + n)
	return sb.String()
}

// covers is FE-R-23: a grant covers a slot iff every present member of the grant
// names a dimension the slot has with an equal canonical value.
func covers(grant []part, k key) bool {
	for i, g := range grant {
		if !g.present {
			continue
		}
		if !k.parts[i].present || canonical(k.parts[i].value) != canonical(g.value) {
			return false
		}
	}
	return true
}

func seqs(xs []int64) []int64 {
	out := append([]int64{}, xs...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func ints(xs []int) []int {
	out := append([]int{}, xs...)
	sort.Ints(out)
	return out
}

// rate is FE-R-32: tenths = (2000·a + b) div (2·b).
func rate(a, b int) map[string]any {
	tenths := (2000*a + b) / (2 * b)
	return map[string]any{
		"numerator":   a,
		"denominator": b,
		"value":       strconv.Itoa(tenths/10) + "." + strconv.Itoa(tenths%10) + "%",
	}
}

// audit replays the log (FE-R-14 … FE-R-19) and states the factors.
func (x *export) audit(gates map[string]string) *Audit {
	r := x.replay()
	aliased, live := 0, 0
	for _, id := range r.slotOrder {
		if len(r.slots[id].rawKeys) >= 2 {
			aliased++
		}
		if r.slots[id].status == stLive {
			live++
		}
	}
	a := &Audit{
		ForgetMode:     x.mode,
		Events:         len(x.events),
		Forgets:        r.forgets,
		ScopeStatement: ScopeStatement,
		HonestyLine:    HonestyLine,
		Factors:        x.factors(gates, r, live),
		Coverage: Coverage{
			ScopeDimensions:    append([]string{}, x.dims...),
			Canonicalization:   append([]string{}, Canonicalization...),
			Slots:              len(r.slotOrder),
			AliasedSlots:       aliased,
			ForgetsOfNotLive:   r.forgetsOfNotLive,
			ReopensIneffective: r.reopensIneffective,
			UnattributedEvents: r.unattributedEvents,
			Principals:         len(x.principals),
			LiveSlots:          live,
		},
	}
	a.VerdictPrefix = verdictPrefix(a, x.tombstoneOnly)
	return a
}

// factors states each factor from the replay's tallies, or NOT ASSESSABLE with the
// first gate's reason.
func (x *export) factors(gates map[string]string, r *replayed, live int) map[string]Factor {
	f := map[string]Factor{}
	na := func(name string) bool {
		if reason := gates[name]; reason != "" {
			f[name] = Factor{"status": statusNotAssessable, "reason": reason}
			return true
		}
		return false
	}
	if !na("forget_envelopes") {
		f["forget_envelopes"] = Factor{"status": statusAssessable, "forgets": r.forgets,
			"with_envelope": r.withEnv, "without_envelope": seqs(r.withoutEnv), "rate": rate(r.withEnv, r.forgets)}
	}
	if !na("reinserts_after_forget") {
		f["reinserts_after_forget"] = Factor{"status": statusAssessable, "reinserts": len(r.reinserts),
			"seqs": seqs(r.reinserts)}
	}
	if !na("reinserts_outside_envelope") {
		f["reinserts_outside_envelope"] = r.outsideFactor(len(x.principals) > 0)
	}
	if !na("alias_reinserts") {
		f["alias_reinserts"] = Factor{"status": statusAssessable, "reinserts": len(r.reinserts),
			"aliases": len(r.aliasSeqs), "seqs": seqs(r.aliasSeqs)}
	}
	if !na("reopens") {
		f["reopens"] = Factor{"status": statusAssessable, "reopens": r.reopens,
			"unchecked": r.reopensUnchecked, "unchecked_seqs": seqs(r.reopenUncheckedSeqs),
			"retired_writes": len(r.retiredWriteSeqs), "retired_write_seqs": seqs(r.retiredWriteSeqs)}
	}
	if !na("reassignments") {
		f["reassignments"] = Factor{"status": statusAssessable, "reassignments": r.reassigns,
			"unchecked": r.reassignUnchecked, "unchecked_seqs": seqs(r.reassignUncheckedSeqs)}
	}
	if !na("replay") {
		f["replay"] = x.replayFactor(r.slots, r.slotOrder, live)
	}
	return f
}

// outsideFactor states reinserts_outside_envelope. A reinsert is judged when its
// governing forget records an envelope and it carries a principal (FE-R-37).
func (r *replayed) outsideFactor(hasPrincipals bool) Factor {
	judged := r.checked - r.unattributed
	fo := Factor{"status": statusAssessable,
		"reinserts": len(r.reinserts), "checked": r.checked, "no_envelope": len(r.reinserts) - r.checked,
		"unattributed": r.unattributed, "unattributed_seqs": seqs(r.unattrSeqs),
		"judged": judged, "unjudged": len(r.reinserts) - judged}
	// The facts outside and silent have gates of their own, read after replay: never
	// a zero where nothing was judged (FE-R-37); silent needs the table's grants
	// (FE-R-35).
	noneJudged := len(r.reinserts) >= 1 && judged == 0
	if noneJudged {
		fo["outside"] = Factor{"status": statusNotAssessable, "reason": reasonNoneJudged}
	} else {
		fo["outside"], fo["outside_seqs"] = r.outside, seqs(r.outsideSeqs)
	}
	switch {
	case noneJudged:
		fo["silent"] = Factor{"status": statusNotAssessable, "reason": reasonNoneJudged}
	case !hasPrincipals:
		fo["silent"] = Factor{"status": statusNotAssessable, "reason": reasonNoPrincipals}
	default:
		fo["silent"], fo["silent_seqs"] = r.silent, seqs(r.silentSeqs)
	}
	return fo
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func anyCovers(grants [][]part, k key) bool {
	for _, g := range grants {
		if covers(g, k) {
			return true
		}
	}
	return false
}

// replayFactor compares the replayed state with the snapshot (FE-R-29).
func (x *export) replayFactor(slots map[string]*slotState, slotOrder []string, live int) Factor {
	seen := map[string]bool{}
	var extra, version, duplicate []int
	for i, se := range x.snapshot {
		id := ident(se.key, true)
		switch s := slots[id]; {
		case seen[id]:
			duplicate = append(duplicate, i)
		case s == nil || s.status != stLive:
			extra = append(extra, i)
		case s.version != se.version:
			version = append(version, i)
		}
		seen[id] = true
	}
	var missing []int64
	for _, id := range slotOrder {
		if s := slots[id]; s.status == stLive && !seen[id] {
			missing = append(missing, s.lastWrite)
		}
	}
	return Factor{"status": statusAssessable, "live_slots": live, "snapshot_entries": len(x.snapshot),
		"mismatches": len(missing) + len(extra) + len(version) + len(duplicate),
		"missing":    len(missing), "extra": len(extra), "version": len(version), "duplicate": len(duplicate),
		"missing_seqs": seqs(missing), "extra_indexes": ints(extra), "version_indexes": ints(version),
		"duplicate_indexes": ints(duplicate)}
}

// verdictPrefix is the verdict line up to and excluding " — <check_end>" (docs,
// "Verdict line"; criteria words.verdict). A member that is itself NOT ASSESSABLE
// (FE-R-37) reads NOT ASSESSABLE, as its factor would. A declared tombstone-only
// store gets the does-not-apply line, its reason in place of the figures (FE-R-38).
func verdictPrefix(a *Audit, doesNotApply bool) string {
	head := verdictHead + " — events: " + strconv.Itoa(a.Events) +
		" · forgets: " + strconv.Itoa(a.Forgets)
	if doesNotApply {
		return head + " · " + reasonDoesNotApply
	}
	val := func(factor, member string) string {
		fv := a.Factors[factor]
		if fv["status"] != statusAssessable {
			return statusNotAssessable
		}
		switch v := fv[member].(type) {
		case int:
			return strconv.Itoa(v)
		case map[string]any:
			return v["value"].(string)
		}
		return statusNotAssessable
	}
	return head +
		" · with envelope: " + val("forget_envelopes", "rate") +
		" · reinserts: " + val("reinserts_after_forget", "reinserts") +
		" · outside envelope: " + val("reinserts_outside_envelope", "outside") +
		" · alias reinserts: " + val("alias_reinserts", "aliases") +
		" · unchecked reopens: " + val("reopens", "unchecked") +
		" · retired-key writes: " + val("reopens", "retired_writes") +
		" · unchecked reassignments: " + val("reassignments", "unchecked") +
		" · replay mismatches: " + val("replay", "mismatches")
}
