// Package evaluator turns (a compiled criteria revision, one export) into a pre-check result, an
// audit report or a refusal. It is pure: no I/O, no clock (the caller passes the time), no global
// state, and safe for concurrent use. Every decision is made by a program of the rules.ProgramSet;
// this package keeps the mechanics: decoding (with the parser it shares with evaluator/mutlog,
// evaluator/internal/jsontree), refusals in the published order, scope tuples, grouping by content
// key, the M4 pointer walk and arithmetic.
package evaluator

import (
	"bytes"
	"errors"

	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// Precheck validates an export and resolves each factor's assessability, computing no factor
// (free_precheck). A refusal is returned for a malformed or over-cap export; an error means a
// rule failed at run time (errors.Is(err, rules.ErrRuleFailed)) and nothing may be answered but a
// static server error.
func Precheck(ps *rules.ProgramSet, body []byte, now time.Time) (*PrecheckResult, *Refusal, error) {
	return PrecheckWith(ps, body, now, Options{})
}

// Options change how an evaluation is observed or fed, never what it decides.
type Options struct {
	// Observer sees every rule evaluation (coverage); nil on the request path.
	Observer rules.Observer
	// OwnedBody hands the body over: it is decoded where it lies instead of copied first (a
	// max-size export would be copied whole, 256 KiB per request). The caller must never modify
	// the body's bytes afterwards, not even after the call has returned, because the decoded
	// export, Prepared.Caller and the strings of the report or pre-check result may point into
	// them for as long as they live. A buffer the caller reuses (for the next request, a fuzz
	// input) must not be passed this way; without OwnedBody the caller may reuse the body as
	// soon as the call returns (PrepareWith copies it; Audit and Precheck read it where it lies
	// during the call and keep nothing of it after, see prepare).
	OwnedBody bool
	// explain, when set, collects the explanation of `rules explain`.
	explain *Explanation
	// treeOnly reads the export through the tree path only (the tests hold the read-once path
	// to it).
	treeOnly bool
}

// PrecheckWith is Precheck with options.
func PrecheckWith(ps *rules.ProgramSet, body []byte, now time.Time, opts Options) (*PrecheckResult, *Refusal, error) {
	st, ref, err := prepare(ps, body, opts, true)
	if ref != nil || err != nil {
		return nil, ref, err
	}
	p := &Prepared{st: st}
	defer p.st.release()
	return p.Precheck(now), nil, nil
}

// Audit computes the five factors, the coverage block and the verdict line. checkEnd is the
// check-end time printed in the verdict line.
func Audit(ps *rules.ProgramSet, body []byte, checkEnd time.Time) (*Report, *Refusal, error) {
	return AuditWith(ps, body, checkEnd, Options{})
}

// AuditWith is Audit with options.
func AuditWith(ps *rules.ProgramSet, body []byte, checkEnd time.Time, opts Options) (*Report, *Refusal, error) {
	st, ref, err := prepare(ps, body, opts, true)
	if ref != nil || err != nil {
		return nil, ref, err
	}
	p := &Prepared{st: st}
	rep, err := p.Audit(checkEnd)
	if err != nil {
		return nil, nil, err
	}
	return rep, nil, nil
}

// Prepared is one export decoded once, validated, and evaluated record by record (liveness,
// predicates, conflict applicability) and for the gates: what a pre-check answers and what an
// audit starts from. A server prepares an export once per request, answers the free refusal
// before any payment, and audits the same Prepared after. A Prepared is used by one goroutine;
// Audit may be called once.
type Prepared struct {
	st      *state
	audited bool
}

// Prepare decodes and validates body and evaluates what every answer needs. A refusal is returned
// for a malformed or over-cap export; an error means a rule failed at run time.
func Prepare(ps *rules.ProgramSet, body []byte) (*Prepared, *Refusal, error) {
	return PrepareWith(ps, body, Options{})
}

// PrepareWith is Prepare with options.
func PrepareWith(ps *rules.ProgramSet, body []byte, opts Options) (*Prepared, *Refusal, error) {
	st, ref, err := prepare(ps, body, opts, false)
	if ref != nil || err != nil {
		return nil, ref, err
	}
	return &Prepared{st: st}, nil, nil
}

// Caller is the export's top-level "caller" member: present is false when it is absent or null,
// and str is its value when it is a string (isString).
func (p *Prepared) Caller() (str string, present, isString bool) {
	if c := p.st.lexCaller; c.read {
		return c.str, c.present, c.isString
	}
	c := p.st.caller
	return c.Str(), c.Present(), c.Kind() == jsontree.String
}

// Precheck answers the free pre-check from the prepared export: assessability, no factor. It is
// called before Audit or Release.
func (p *Prepared) Precheck(now time.Time) *PrecheckResult {
	st := p.st
	c := st.ps.Criteria()
	res := &PrecheckResult{
		Kind: "precheck_result", Service: c.Service, CriteriaID: c.CriteriaID,
		CriteriaRevision: c.CriteriaRevision, CriteriaDigest: st.ps.Digest(), Op: "precheck",
		Family: st.x.scope.Family, Form: st.x.scope.Form, Variant: st.x.scope.Variant,
		Records: len(st.x.records), Live: st.live,
		MatrixRow: map[string]MatrixCell{}, Factors: map[string]Status{},
		CheckedAt: timestamp(now),
	}
	for _, f := range rules.Factors {
		cell := c.Matrix[st.x.scope.Family][st.x.scope.Form][f]
		res.MatrixRow[f] = MatrixCell{Status: cell.Status, Note: cell.Note}
		res.Factors[f] = st.status(f)
	}
	return res
}

// Release gives the prepared export's buffers back for the next export, when it will not be
// audited (Audit gives them back itself). Afterwards only Caller may be called.
func (p *Prepared) Release() {
	if !p.audited {
		p.audited = true
		p.st.release()
	}
}

// errAudited is the static error of a second Audit of one Prepared.
var errAudited = errors.New("evaluator: a prepared export is audited once")

// Audit computes the five factors, the coverage block and the verdict line of the prepared
// export. checkEnd is the check-end time printed in the verdict line (see Stamp).
func (p *Prepared) Audit(checkEnd time.Time) (*Report, error) {
	if p.audited {
		return nil, errAudited
	}
	p.audited = true
	st := p.st
	defer st.release() // the report holds strings only: the export's buffers go back
	if err := st.marks(); err != nil {
		return nil, err
	}
	rep := st.report(checkEnd)
	if err := st.fillClusters(rep); err != nil {
		return nil, err
	}
	if err := st.fillConflicts(rep); err != nil {
		return nil, err
	}
	st.fillDuplicates(rep)
	dropCoverageFacts(st.ps.Criteria(), rep)
	rep.VerdictLine = verdictLine(st.ps.Criteria().Words, rep)
	if st.opts.explain != nil {
		if err := st.explainTail(); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// state is one evaluation in progress.
type state struct {
	opts    Options
	ps      *rules.ProgramSet
	x       *export
	act     *rules.RecordActivation
	slots   []rules.SlotValues
	applies []uint32 // per record, bit j: conflict sub-check j applies
	live    int
	gates   [5]*rules.GateProgram // the gate that fired per factor, nil when ASSESSABLE
	sub     rules.Submission
	caller  jsontree.Value // the top-level caller member (the server's free tier reads it)
	// lexCaller is the caller member instead when the read-once path read the export.
	lexCaller callerMember
	scratch   [5][]string
	ids       [2][]int32               // scratch of clusterFacts: interned tuple and key-set numbers
	clAct     *rules.ClusterActivation // one per export: it memoizes the cluster decisions
	copies    []int
	members   []Member // the report's cluster members, one array cut per cluster

	eligible, scopedEligible, templates, sourcePassages int
	// scopes, liveScopes and checked are the gates' counts (records, resolveGates).
	scopes, liveScopes, checked int
	referrals                   []string
	b5NotRun, lineage           int
}

// prepare decodes, validates and runs the record stage. whole is true when the caller answers
// within this call (Audit, Precheck): a body that is not handed over is then read where it lies,
// not copied, and the strings the answer keeps are moved out of it (rehome) before the call
// returns, so that the caller may reuse it as soon as the call returns, as it may a copied one.
// Copying it cost a pass over 256 KiB written and read again, and its clearing when given back.
func prepare(ps *rules.ProgramSet, body []byte, opts Options, whole bool) (*state, *Refusal, error) {
	if r := CheckBodySize(ps, len(body)); r != nil {
		return nil, r, nil
	}
	b := getBuffers()
	dopts := jsontree.Options{MaxDepth: ps.Criteria().Caps.JSONDepth, Owned: opts.OwnedBody}
	inPlace := whole && !opts.OwnedBody && opts.Observer == nil && opts.explain == nil
	switch {
	case inPlace:
		// Nothing changes the body during the call; nothing the answer keeps points into it.
		dopts.Owned = true
	case !opts.OwnedBody:
		// The export's strings alias the body: one copy of it (what the tree decoder would make
		// itself), for both paths.
		body, dopts.Owned = bytes.Clone(body), true
	}
	var x *export
	var caller callerMember
	var top jsontree.Value
	if !opts.treeOnly {
		x, caller = lexExport(ps, body, b, inPlace)
	}
	if x == nil {
		// The tree path: any body the read-once path did not read, every refusal among them.
		b.resetRead()
		var err error
		if top, err = jsontree.Decode(body, dopts, &b.slabs); err != nil {
			b.release()
			return nil, newRefusal("export_required"), nil
		}
		if r := validate(ps, &top); r != nil {
			b.release()
			return nil, r, nil
		}
		x = newExport(ps, &top, b)
	}
	if inPlace {
		x.rehome()
	}
	st := &state{opts: opts, ps: ps, x: x, act: ps.NewRecordActivation(x.scope), caller: *top.Get("caller"), lexCaller: caller}
	st.act.Obs = opts.Observer
	if err := st.records(); err != nil {
		st.release()
		return nil, nil, err
	}
	if err := st.resolveGates(); err != nil {
		st.release()
		return nil, nil, err
	}
	return st, nil, nil
}

// release gives the export's buffers back (see buffers); the state must not be used afterwards.
func (st *state) release() {
	b := st.x.b
	if b != nil {
		b.slots, b.applies = st.slots, st.applies
	}
	st.x.release()
	st.x, st.slots, st.applies = nil, nil, nil
}
