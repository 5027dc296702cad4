// Package mutlog is the evaluator mechanics of criteria of kind mutation-log
// (docs/forget-envelope.md): it turns (a compiled rules.MutLogSet, one mutation-log export) into a
// pre-check result, an audit report or a refusal. It is pure: no I/O, no clock (the caller passes
// the time), safe for concurrent use. Go keeps the mechanics only: strict decoding, the refusal
// checks in the criteria's order, canonicalizing keys by the criteria's steps, ordering events by
// sequence, replaying the log through the criteria's transition table, matching grants, and
// arithmetic. Every decision (per-event predicates, assessability gates) is a CEL program of the
// criteria.
package mutlog

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// Options change how an evaluation is observed, never what it decides.
type Options struct {
	// Observer sees every rule evaluation (coverage); nil on the request path.
	Observer rules.Observer
	// explain, when set, collects why each decision and gate came out as it did (Explain).
	explain *Explanation
}

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

// state is one evaluation in progress.
type state struct {
	ms    *rules.MutLogSet
	opts  Options
	l     *log
	facts rules.LogFacts
	gates map[string]*rules.GateProgram
	// dna is the does_not_apply gate that holds (nil: the rules apply, FE-R-38).
	dna *rules.GateProgram
	// counts are the counts the fact gates read (nil until computed).
	counts *rules.LogCounts
	// withEnvelope holds the forget.with_envelope decision per event, by index in l.events.
	withEnvelope []bool
	// ev and fg are the facts of the event being decided, reused: the programs read them only
	// while they run.
	ev rules.LogEvent
	fg rules.LogForget
}

// read decodes a body under FE-R-3, runs the refusal checks and reads the log. The value tree
// lives only here: its slabs go back to the pool before the log is evaluated.
func read(ms *rules.MutLogSet, body []byte) (*log, *Refusal) {
	s := getSlabs()
	defer releaseSlabs(s)
	top, err := jsontree.Decode(body, jsontree.Options{MaxDepth: ms.Criteria().Caps.JSONDepth}, s)
	if err != nil {
		return nil, refusal("export_required")
	}
	if r := validate(ms, &top); r != nil {
		return nil, r
	}
	return readLog(ms, &top), nil
}

func prepare(ms *rules.MutLogSet, body []byte, opts Options) (*state, *Refusal, error) {
	if r := CheckBodySize(ms, len(body)); r != nil {
		return nil, r, nil
	}
	l, r := read(ms, body)
	if r != nil {
		return nil, r, nil
	}
	st := &state{ms: ms, opts: opts, l: l, gates: map[string]*rules.GateProgram{}, withEnvelope: make([]bool, len(l.events))}
	f := &st.facts
	f.ForgetMode, f.Events, f.Principals, f.Snapshot = st.l.mode, int64(len(st.l.events)), int64(st.l.principals), st.l.hasSnap
	for _, d := range st.l.declared {
		d.Set(f)
	}
	act := &rules.EventActivation{Obs: opts.Observer}
	for i := range st.l.events {
		ev := &st.l.events[i]
		switch ev.op {
		case "forget":
			f.Forgets++
			act.Event, act.Forget = st.eventFacts(ev), nil
			v, err := ms.Decide("forget", act)
			if err != nil {
				return nil, nil, err
			}
			st.withEnvelope[i] = v[0]
			st.explainEvent(ev, "forget", v)
			if v[0] {
				f.ForgetsWithEnvelope++
			}
		case "reassign":
			f.Reassigns++
		}
	}
	la := &rules.LogActivation{Log: f, Obs: opts.Observer}
	dna, err := ms.DoesNotApply(la)
	if err != nil {
		return nil, nil, err
	}
	st.dna = dna
	for _, name := range rules.MutLogFactors {
		g, err := ms.Gate(name, la)
		if err != nil {
			return nil, nil, err
		}
		st.gates[name] = g
	}
	return st, nil, nil
}

// eventFacts are the CEL facts of one event.
func (st *state) eventFacts(ev *event) *rules.LogEvent {
	e := &st.ev
	*e = rules.LogEvent{Seq: ev.seq, Op: ev.op, EnvelopeRecorded: ev.envelope != nil, AuthorityChecked: ev.checked, RawKey: ev.raw}
	if ev.hasPrincipal {
		e.HasPrincipal, e.Principal = true, ev.principal
		if p := st.l.table[ev.principal]; p != nil && ev.keyed {
			e.GrantsCover = p.covers(st.l.scope(ev.slot))
		}
	}
	return e
}

func (st *state) forgetFacts(ev *event) *rules.LogForget {
	f := &st.fg
	if ev == nil {
		*f = rules.LogForget{}
		return f
	}
	*f = rules.LogForget{Seq: ev.seq, EnvelopeRecorded: ev.envelope != nil, Envelope: ev.envelope, RawKey: ev.raw}
	return f
}

// gate is the gate that makes a factor NOT ASSESSABLE: a does_not_apply gate first (FE-R-38), then
// the factor's own; nil when it is ASSESSABLE.
func (st *state) gate(factor string) *rules.GateProgram {
	if st.dna != nil {
		return st.dna
	}
	return st.gates[factor]
}

func (st *state) status(factor string) Status {
	w := st.ms.Criteria().Words
	if g := st.gate(factor); g != nil {
		return Status{Status: w.NotAssessable, Reason: g.Reason}
	}
	return Status{Status: w.Assessable}
}

// Precheck validates a log and resolves each factor's assessability, computing no factor. A
// refusal is returned for a malformed or over-cap log; an error means a rule failed at run time
// (errors.Is(err, rules.ErrRuleFailed)).
func Precheck(ms *rules.MutLogSet, body []byte, now time.Time) (*PrecheckResult, *Refusal, error) {
	return PrecheckWith(ms, body, now, Options{})
}

// PrecheckWith is Precheck with options.
func PrecheckWith(ms *rules.MutLogSet, body []byte, now time.Time, opts Options) (*PrecheckResult, *Refusal, error) {
	st, ref, err := prepare(ms, body, opts)
	if ref != nil || err != nil {
		return nil, ref, err
	}
	c := ms.Criteria()
	res := &PrecheckResult{Kind: "precheck_result", Service: c.Service, CriteriaID: c.CriteriaID,
		CriteriaRevision: c.CriteriaRevision, CriteriaDigest: ms.Digest(), Op: "precheck",
		ForgetMode: st.l.mode, Events: len(st.l.events), Factors: map[string]Status{}, CheckedAt: timestamp(now)}
	for _, f := range rules.MutLogFactors {
		res.Factors[f] = st.status(f)
	}
	return res, nil, nil
}

// Audit computes the seven factors, the coverage block and the verdict line.
func Audit(ms *rules.MutLogSet, body []byte, checkEnd time.Time) (*Report, *Refusal, error) {
	return AuditWith(ms, body, checkEnd, Options{})
}

func seqs() []int64 { return []int64{} }

// AuditWith is Audit with options.
func AuditWith(ms *rules.MutLogSet, body []byte, checkEnd time.Time, opts Options) (*Report, *Refusal, error) {
	st, ref, err := prepare(ms, body, opts)
	if ref != nil || err != nil {
		return nil, ref, err
	}
	c := ms.Criteria()
	w := c.Words
	l := st.l
	rp := replay(ms, l)
	rep := &Report{Kind: "audit_report", Service: c.Service, CriteriaID: c.CriteriaID,
		CriteriaRevision: c.CriteriaRevision, CriteriaDigest: ms.Digest(), Op: "audit",
		ForgetMode: l.mode, Events: len(l.events), Forgets: int(st.facts.Forgets),
		ScopeStatement: c.Texts["scope_text"], HonestyLine: c.Texts["honesty_line"], verdict: map[string]string{}}
	na := func(f string) any {
		if st.gate(f) != nil {
			return st.status(f)
		}
		return nil
	}
	if st.dna != nil {
		rep.doesNotApply = st.dna.Reason
	}

	// (1) forget_envelopes
	fe := ForgetEnvelopes{Status: w.Assessable, WithoutEnvelope: seqs()}
	for i := range l.events {
		if ev := &l.events[i]; ev.op == "forget" {
			fe.Forgets++
			if st.withEnvelope[i] {
				fe.WithEnvelope++
			} else {
				fe.WithoutEnvelope = append(fe.WithoutEnvelope, ev.seq)
			}
		}
	}
	if s := na("forget_envelopes"); s != nil {
		rep.Factors.ForgetEnvelopes = s
	} else {
		fe.Rate = rate(fe.WithEnvelope, fe.Forgets)
		rep.Factors.ForgetEnvelopes = fe
		rep.verdict["with_envelope"] = fe.Rate.Value
	}

	// (2)-(4) and the retired writes of (5): the reinserts, judged by the criteria's decisions.
	ri := Reinserts{Status: w.Assessable, Seqs: seqs()}
	var outside, silent, judged int
	outsideSeqs, silentSeqs := seqs(), seqs()
	oe := OutsideEnvelope{Status: w.Assessable, UnattributedSeqs: seqs()}
	al := Aliases{Status: w.Assessable, Seqs: seqs()}
	ro := Reopens{Status: w.Assessable, UncheckedSeqs: seqs(), RetiredWriteSeqs: seqs()}
	act := &rules.EventActivation{Obs: opts.Observer}
	for _, r := range rp.reinserts {
		act.Event, act.Forget = st.eventFacts(r.ev), st.forgetFacts(r.forget)
		v, err := ms.Decide("reinsert", act)
		if err != nil {
			return nil, nil, err
		}
		st.explainEvent(r.ev, "reinsert", v)
		checked, unattributed, isOutside, isSilent, alias := v[0], v[1], v[2], v[3], v[4]
		ri.Reinserts++
		ri.Seqs = append(ri.Seqs, r.ev.seq)
		ro.RetiredWrites++
		ro.RetiredWriteSeqs = append(ro.RetiredWriteSeqs, r.ev.seq)
		oe.Reinserts++
		if checked {
			oe.Checked++
		} else {
			oe.NoEnvelope++
		}
		if unattributed {
			oe.Unattributed++
			oe.UnattributedSeqs = append(oe.UnattributedSeqs, r.ev.seq)
		}
		if checked && !unattributed {
			judged++
		}
		if isOutside {
			outside++
			outsideSeqs = append(outsideSeqs, r.ev.seq)
		}
		if isSilent {
			silent++
			silentSeqs = append(silentSeqs, r.ev.seq)
		}
		al.Reinserts++
		if alias {
			al.Aliases++
			al.Seqs = append(al.Seqs, r.ev.seq)
		}
	}
	for _, ev := range rp.reopens {
		act.Event, act.Forget = st.eventFacts(ev), nil
		v, err := ms.Decide("reopen", act)
		if err != nil {
			return nil, nil, err
		}
		st.explainEvent(ev, "reopen", v)
		ro.Reopens++
		if v[0] {
			ro.Unchecked++
			ro.UncheckedSeqs = append(ro.UncheckedSeqs, ev.seq)
		}
	}
	rs := Reassignments{Status: w.Assessable, UncheckedSeqs: seqs()}
	for i := range l.events {
		ev := &l.events[i]
		if ev.op != "reassign" {
			continue
		}
		act.Event, act.Forget = st.eventFacts(ev), nil
		v, err := ms.Decide("reassign", act)
		if err != nil {
			return nil, nil, err
		}
		st.explainEvent(ev, "reassign", v)
		rs.Reassignments++
		if v[0] {
			rs.Unchecked++
			rs.UncheckedSeqs = append(rs.UncheckedSeqs, ev.seq)
		}
	}
	set := func(name string, ok any, slot *any, figures map[string]int) {
		if s := na(name); s != nil {
			*slot = s
			return
		}
		*slot = ok
		for k, n := range figures {
			rep.verdict[k] = strconv.Itoa(n)
		}
	}
	set("reinserts_after_forget", ri, &rep.Factors.ReinsertsAfterForget, map[string]int{"reinserts": ri.Reinserts})
	if na("reinserts_outside_envelope") == nil {
		unjudged := oe.Reinserts - judged
		if len(ms.FactGates("reinserts_outside_envelope.outside"))+len(ms.FactGates("reinserts_outside_envelope.silent")) > 0 {
			oe.Judged, oe.Unjudged = &judged, &unjudged
		}
		counts := &rules.LogCounts{Reinserts: int64(oe.Reinserts), Checked: int64(oe.Checked), NoEnvelope: int64(oe.NoEnvelope),
			Unattributed: int64(oe.Unattributed), Judged: int64(judged), Unjudged: int64(unjudged)}
		st.counts = counts
		fa := &rules.LogActivation{Log: &st.facts, Counts: counts, Obs: opts.Observer}
		og, err := ms.FactGate("reinserts_outside_envelope.outside", fa)
		if err != nil {
			return nil, nil, err
		}
		sg, err := ms.FactGate("reinserts_outside_envelope.silent", fa)
		if err != nil {
			return nil, nil, err
		}
		if og != nil {
			oe.Outside = Status{Status: w.NotAssessable, Reason: og.Reason}
		} else {
			oe.Outside, oe.OutsideSeqs = outside, &outsideSeqs
			rep.verdict["outside"] = strconv.Itoa(outside)
		}
		if sg != nil {
			oe.Silent = Status{Status: w.NotAssessable, Reason: sg.Reason}
		} else {
			oe.Silent, oe.SilentSeqs = silent, &silentSeqs
		}
	}
	set("reinserts_outside_envelope", oe, &rep.Factors.ReinsertsOutsideEnvelope, nil)
	set("alias_reinserts", al, &rep.Factors.AliasReinserts, map[string]int{"aliases": al.Aliases})
	set("reopens", ro, &rep.Factors.Reopens, map[string]int{"unchecked_reopens": ro.Unchecked, "retired_writes": ro.RetiredWrites})
	set("reassignments", rs, &rep.Factors.Reassignments, map[string]int{"unchecked_reassignments": rs.Unchecked})

	// (7) replay against the snapshot.
	live := 0
	for _, n := range rp.order {
		if rp.slots[n].status == c.Replay.Live {
			live++
		}
	}
	rv := Replay{Status: w.Assessable, LiveSlots: live, SnapshotEntries: len(l.snapshot), MissingSeqs: seqs(),
		ExtraIndexes: []int{}, VersionIndexes: []int{}, DuplicateIndexes: []int{}}
	seen := make([]bool, len(l.slots))
	for i, e := range l.snapshot {
		s := &rp.slots[e.slot]
		switch {
		case seen[e.slot]:
			rv.DuplicateIndexes = append(rv.DuplicateIndexes, i)
		case !s.touched || s.status != c.Replay.Live:
			rv.ExtraIndexes = append(rv.ExtraIndexes, i)
		case s.version != e.version:
			rv.VersionIndexes = append(rv.VersionIndexes, i)
		}
		seen[e.slot] = true
	}
	for _, k := range rp.order {
		if s := &rp.slots[k]; s.status == c.Replay.Live && !seen[k] {
			rv.MissingSeqs = append(rv.MissingSeqs, s.lastWrite)
		}
	}
	sort.Slice(rv.MissingSeqs, func(i, j int) bool { return rv.MissingSeqs[i] < rv.MissingSeqs[j] })
	rv.Missing, rv.Extra, rv.Version, rv.Duplicate = len(rv.MissingSeqs), len(rv.ExtraIndexes), len(rv.VersionIndexes), len(rv.DuplicateIndexes)
	rv.Mismatches = rv.Missing + rv.Extra + rv.Version + rv.Duplicate
	set("replay", rv, &rep.Factors.Replay, map[string]int{"mismatches": rv.Mismatches})

	// Coverage.
	cov := Coverage{ScopeDimensions: l.dims, Canonicalization: append([]string{}, c.Canonicalization...),
		Slots: len(rp.order), ForgetsOfNotLive: rp.forgotNotLv, ReopensIneffective: rp.reopenNoop,
		Principals: l.principals, LiveSlots: live}
	for _, n := range rp.order {
		if rp.slots[n].aliased {
			cov.AliasedSlots++
		}
	}
	for i := range l.events {
		if !l.events[i].hasPrincipal {
			cov.UnattributedEvents++
		}
	}
	rep.Coverage = cov
	Stamp(ms, rep, checkEnd)
	if opts.explain != nil {
		if err := st.explainGates(); err != nil {
			return nil, nil, err
		}
	}
	return rep, nil, nil
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
	if rep.doesNotApply != "" {
		rep.VerdictLine = strings.NewReplacer("{events}", strconv.Itoa(rep.Events), "{forgets}", strconv.Itoa(rep.Forgets),
			"{does_not_apply}", rep.doesNotApply, "{check_end}", rep.CheckEnd).Replace(w.VerdictDoesNotApply)
		return
	}
	rep.VerdictLine = strings.NewReplacer(
		"{events}", strconv.Itoa(rep.Events), "{forgets}", strconv.Itoa(rep.Forgets),
		"{with_envelope}", fig("with_envelope"), "{reinserts}", fig("reinserts"), "{outside}", fig("outside"),
		"{aliases}", fig("aliases"), "{unchecked_reopens}", fig("unchecked_reopens"),
		"{retired_writes}", fig("retired_writes"), "{unchecked_reassignments}", fig("unchecked_reassignments"),
		"{mismatches}", fig("mismatches"), "{check_end}", rep.CheckEnd,
	).Replace(w.Verdict)
}
