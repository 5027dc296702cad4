// Package evaluator turns (a compiled criteria revision, one export) into a pre-check result, an
// audit report or a refusal. It is pure: no I/O, no clock (the caller passes the time), no global
// state, and safe for concurrent use. Every decision is made by a program of the rules.ProgramSet;
// this package keeps the mechanics: decoding (with the parser it shares with evaluator/mutlog,
// evaluator/internal/jsontree), refusals in the published order, scope tuples, grouping by content
// key, the M4 pointer walk and arithmetic.
package evaluator

import (
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
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
	// input) must not be passed this way; without OwnedBody the body is copied and the caller
	// may reuse it as soon as the call returns.
	OwnedBody bool
	// explain, when set, collects the explanation of `rules explain`.
	explain *Explanation
}

// PrecheckWith is Precheck with options.
func PrecheckWith(ps *rules.ProgramSet, body []byte, now time.Time, opts Options) (*PrecheckResult, *Refusal, error) {
	p, ref, err := PrepareWith(ps, body, opts)
	if ref != nil || err != nil {
		return nil, ref, err
	}
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
	p, ref, err := PrepareWith(ps, body, opts)
	if ref != nil || err != nil {
		return nil, ref, err
	}
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
	st, ref, err := prepare(ps, body, opts)
	if ref != nil || err != nil {
		return nil, ref, err
	}
	return &Prepared{st: st}, nil, nil
}

// Caller is the export's top-level "caller" member: present is false when it is absent or null,
// and str is its value when it is a string (isString).
func (p *Prepared) Caller() (str string, present, isString bool) {
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
	scratch [5][]string
	clAct   *rules.ClusterActivation // one per export: it memoizes the cluster decisions
	copies  []int

	eligible, scopedEligible, templates, sourcePassages int
	referrals                                           []string
	b5NotRun, lineage                                   int
}

func prepare(ps *rules.ProgramSet, body []byte, opts Options) (*state, *Refusal, error) {
	if r := CheckBodySize(ps, len(body)); r != nil {
		return nil, r, nil
	}
	b := getBuffers()
	top, err := jsontree.Decode(body, jsontree.Options{MaxDepth: ps.Criteria().Caps.JSONDepth, Owned: opts.OwnedBody}, &b.slabs)
	if err != nil {
		b.release()
		return nil, refusal("export_required"), nil
	}
	if r := validate(ps, &top); r != nil {
		b.release()
		return nil, r, nil
	}
	x := newExport(ps, &top, b)
	st := &state{opts: opts, ps: ps, x: x, act: ps.NewRecordActivation(x.scope), caller: *top.Get("caller")}
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

// records runs the liveness conditions, the record predicates and the conflict applicability of
// every record.
func (st *state) records() error {
	ps, x, act := st.ps, st.x, st.act
	st.slots = sized(x.b.slots, len(x.records))[:len(x.records)]
	st.applies = sized(x.b.applies, len(x.records))[:len(x.records)]
	for i := range x.records {
		r := &x.records[i]
		act.Record = &r.facts
		if _, err := ps.EvalLiveness(act); err != nil {
			return err
		}
		if err := ps.EvalRecord(act); err != nil {
			return err
		}
		if st.opts.explain != nil {
			if err := st.explainRecord(i); err != nil {
				return err
			}
		}
		r.live = act.Live
		r.template, r.eligible, r.contested = act.Get(rules.Template), act.Get(rules.Eligible), act.Get(rules.Contested)
		r.m1, r.m3, r.anchor = act.Get(rules.M1), act.Get(rules.M3), act.Get(rules.CycleAnchor)
		r.malformed, r.nonSharing = act.Get(rules.MalformedMarker), act.Get(rules.NonSharing)
		st.slots[i] = act.Values()
		if r.live {
			st.live++
		}
		if act.Get(rules.SplitState) {
			x.cov.SplitState++
		}
		if r.contested {
			x.cov.Contested++
		}
		switch {
		case r.eligible:
			st.eligible++
			if r.facts.Scoped {
				st.scopedEligible++
			}
		case r.template:
			st.templates++
		default:
			st.sourcePassages++
		}
		m, err := ps.EvalApplies(act)
		if err != nil {
			return err
		}
		st.applies[i] = m
	}
	return nil
}

func (st *state) resolveGates() error {
	x := st.x
	// Distinct tuples, by their interned number: bit 0 seen, bit 1 seen live and not global.
	seen := make([]uint8, len(x.interned))
	scopes, liveScopes, checked := 0, 0, 0
	for i := range x.records {
		r := &x.records[i]
		if r.facts.Scoped {
			if seen[r.tid]&1 == 0 {
				seen[r.tid] |= 1
				scopes++
			}
			if r.live && !r.facts.Global && seen[r.tid]&2 == 0 {
				seen[r.tid] |= 2
				liveScopes++
			}
		}
		if st.applies[i] != 0 {
			checked++
		}
	}
	keys := x.keys
	if x.letta {
		keys = []string{"attached_to"}
	}
	st.sub = rules.Submission{
		ScopeKeys: append([]string{}, keys...), ScopeKeysSource: x.keySource,
		Records: int64(len(x.records)), Live: int64(st.live), Eligible: int64(st.eligible),
		DistinctScopes: int64(scopes), LiveNonGlobalScopes: int64(liveScopes), ScopeFiltered: x.manifest.scopeFiltered,
		MultiScope: x.manifest.multiScope, ManifestPresent: x.manifest.present,
		ConflictCheckedRecords: int64(checked),
	}
	act := &rules.SubmissionActivation{Scope: x.scope, Submission: &st.sub, Obs: st.opts.Observer}
	var err error
	st.gates, err = st.ps.EvalGates(act)
	return err
}

func (st *state) status(factor string) Status {
	w := st.ps.Criteria().Words
	if g := st.gateFor(factor); g != nil {
		return Status{Status: w.NotAssessable, Reason: g.Reason}
	}
	return Status{Status: w.Assessable}
}

func (st *state) gateFor(f string) *rules.GateProgram {
	for i, x := range rules.Factors {
		if x == f {
			return st.gates[i]
		}
	}
	return nil
}

// clusterSize counts, per content key, the live scoped records the M4 depth limit counts
// (R-21, R-33; clusters.m4_depth: members leaves out the Letta templates L-4 keeps out).
func (st *state) clusterSize() []int {
	members := st.ps.Criteria().Clusters.M4Depth == rules.M4DepthMembers
	size := make([]int, len(st.x.contents))
	for i := range st.x.records {
		r := &st.x.records[i]
		if r.live && r.facts.Scoped && !(members && r.template) {
			size[r.cid]++
		}
	}
	return size
}

// marks runs the M4 walk, then the mark predicates, for every live record (a marker on a non-live
// record is inert; whether an unscoped record can be covered is the criteria's call, P0).
func (st *state) marks() error {
	x, ps, act := st.x, st.ps, st.act
	size := st.clusterSize()
	anchor := func(j int) bool { return x.records[j].anchor }
	for i := range x.records {
		r := &x.records[i]
		if !r.live {
			continue
		}
		if r.raw.Get("origin_claim_id").Present() {
			r.hasPointer = true
			r.facts.M4Resolves = x.walk(i, size[r.cid], anchor, st.pointerTrace(i))
		}
		act.Restore(&r.facts, r.live, st.slots[i])
		if err := ps.EvalMarks(act); err != nil {
			return err
		}
		r.covered, r.contradiction = act.Get(rules.Covered), act.Get(rules.Contradiction)
	}
	return nil
}

// rate is a percent to one decimal, half up, in integers.
func rate(num, den int, noDen, na string) *Rate {
	if den == 0 {
		return &Rate{Numerator: num, Denominator: den, Value: na, Reason: noDen}
	}
	tenths := (2000*num + den) / (2 * den)
	return &Rate{Numerator: num, Denominator: den, Value: strconv.Itoa(tenths/10) + "." + strconv.Itoa(tenths%10) + "%"}
}

func timestamp(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

func (st *state) report(checkEnd time.Time) *Report {
	ps, x := st.ps, st.x
	c := ps.Criteria()
	w := c.Words
	rep := &Report{
		Kind: "audit_report", Service: c.Service, CriteriaID: c.CriteriaID,
		CriteriaRevision: c.CriteriaRevision, CriteriaDigest: ps.Digest(), Op: "audit",
		Family: x.scope.Family, Form: x.scope.Form, Variant: x.scope.Variant,
		Records: len(x.records), Live: st.live, CheckEnd: timestamp(checkEnd),
		ScopeStatement: c.Texts.ScopeText, HonestyLine: c.Texts.HonestyLine,
	}
	distinct := int(st.sub.DistinctScopes)
	switch g := st.gateFor("scope_presence"); {
	case g == nil:
		rep.Factors.ScopePresence = ScopePresence{Status: w.Assessable, Scoped: intp(st.scopedEligible),
			Eligible: intp(st.eligible), DistinctScopes: intp(distinct),
			Rate: rate(st.scopedEligible, st.eligible, "", w.NotAssessable)}
	case g.KeepCounts:
		rep.Factors.ScopePresence = ScopePresence{Status: w.NotAssessable, Reason: g.Reason,
			Scoped: intp(st.scopedEligible), Eligible: intp(st.eligible), DistinctScopes: intp(distinct)}
	default:
		rep.Factors.ScopePresence = ScopePresence{Status: w.NotAssessable, Reason: g.Reason}
	}
	unscoped := st.eligible - st.scopedEligible
	switch g := st.gateFor("unscoped_rate"); {
	case g == nil:
		rep.Factors.UnscopedRate = UnscopedRate{Status: w.Assessable, Unscoped: intp(unscoped),
			Eligible: intp(st.eligible), Rate: rate(unscoped, st.eligible, "", w.NotAssessable)}
	case g.KeepCounts:
		rep.Factors.UnscopedRate = UnscopedRate{Status: w.NotAssessable, Reason: g.Reason, Unscoped: intp(unscoped), Eligible: intp(st.eligible)}
	default:
		rep.Factors.UnscopedRate = UnscopedRate{Status: w.NotAssessable, Reason: g.Reason}
	}
	keys := st.sub.ScopeKeys
	sa, ka, ia := x.declaredAbsent()
	rep.Coverage = Coverage{
		ScopeKeys: keys, ScopeKeysSource: x.keySource,
		SessionIDAsRunID: x.cov.SessionIDAsRunID, NonStringScopeValues: x.cov.NonStringScopeValues,
		Eligible: st.eligible, ExcludedTemplates: st.templates, ExcludedSourcePass: st.sourcePassages,
		NotLive: len(x.records) - st.live, SplitState: x.cov.SplitState, Contested: x.cov.Contested,
		DanglingSupersedes: x.cov.DanglingSupersedes,
		M3DeclaredAbsent:   map[string]int{"global_scopes": sa, "global_content_keys": ka, "global_claim_ids": ia},
		ManifestIgnored:    x.cov.ManifestIgnored,
		MarkedShare:        rate(st.marked(), st.live, w.NoLiveRecords, w.NotAssessable),
		B5NotRun:           intp(0), TemplateLineage: intp(0),
	}
	return rep
}

// marked counts the live records that are covered or global.
func (st *state) marked() int {
	n := 0
	for i := range st.x.records {
		r := &st.x.records[i]
		if r.live && (r.covered || r.facts.Global) {
			n++
		}
	}
	return n
}

// fillClusters computes factor cross_scope_clusters.
func (st *state) fillClusters(rep *Report) error {
	ps, x := st.ps, st.x
	c := ps.Criteria()
	w := c.Words
	f := &rep.Factors.CrossScopeClusters
	if g := st.gateFor("cross_scope_clusters"); g != nil {
		// A factor that is NOT ASSESSABLE computes nothing: no clusters, no referrals.
		*f = CrossScopeClusters{Status: w.NotAssessable, Reason: g.Reason}
		return nil
	}
	// Records grouped by content key (its number), in order of first appearance; each group's
	// records are chained through next. There are at most as many groups as content keys: one
	// allocation of 12 bytes each, not a slice grown by doubling.
	type group struct{ first, last, size int32 }
	at := make([]int32, len(x.contents)) // content number -> group index + 1
	groups := make([]group, 0, len(x.contents))
	next := make([]int32, len(x.records))
	for i := range x.records {
		r := &x.records[i]
		if !r.live || !r.facts.Scoped || r.template {
			continue
		}
		next[i] = -1
		if at[r.cid] == 0 {
			groups = append(groups, group{first: int32(i), last: int32(i), size: 1})
			at[r.cid] = int32(len(groups))
			continue
		}
		g := &groups[at[r.cid]-1]
		next[g.last] = int32(i)
		g.last = int32(i)
		g.size++
	}
	var clusters []ClusterReport
	counts := map[string]int{}
	var members []int
	for _, g := range groups {
		if g.size < 2 {
			continue
		}
		members = members[:0]
		for j := g.first; j >= 0; j = next[j] {
			members = append(members, int(j))
		}
		cr, class, err := st.cluster(members)
		if err != nil {
			return err
		}
		if cr == nil {
			continue
		}
		counts[class]++
		clusters = append(clusters, *cr)
	}
	slices.SortFunc(clusters, func(a, b ClusterReport) int { return compareMemberIDs(a.Members, b.Members) })
	for i := range clusters {
		clusters[i].Cluster = i + 1
	}
	rep.Coverage.B5NotRun, rep.Coverage.TemplateLineage = intp(st.b5NotRun), intp(st.lineage)
	if clusters == nil {
		clusters = []ClusterReport{}
	}
	*f = CrossScopeClusters{
		Status: w.Assessable, Candidate: intp(len(clusters)),
		MarkedShared: intp(counts["marked_shared"]), Undeclared: intp(counts["undeclared"]),
		Ambiguous: intp(counts["ambiguous"]), TemplateLineage: intp(st.lineage),
		MarkedShare: rep.Coverage.MarkedShare, Clusters: &clusters,
	}
	return nil
}

// cluster builds one content key's cluster facts and classifies it. It returns nil when the key
// forms no cluster or forms a template-lineage cluster (counted apart, R-24).
func (st *state) cluster(members []int) (*ClusterReport, string, error) {
	ps, x := st.ps, st.x
	copies := st.copies[:0]
	defer func() { st.copies = copies[:0] }()
	cl := rules.Cluster{Letta: x.letta}
	for _, i := range members {
		if x.records[i].facts.Global {
			cl.Globals++
		} else {
			copies = append(copies, i)
		}
	}
	cl.Copies = int64(len(copies))
	// Clusters are small: distinct values are counted over reused slices, not maps.
	scopes, keySets, sources := st.scratch[0][:0], st.scratch[1][:0], st.scratch[2][:0]
	tids, btids := st.scratch[3][:0], st.scratch[4][:0]
	for _, i := range copies {
		r := &x.records[i]
		scopes, keySets = append(scopes, r.tuple), append(keySets, r.keySet)
		if r.covered {
			cl.Covered++
		}
		if r.malformed {
			cl.Malformed++
		}
		if r.contradiction {
			cl.Contradictions++
		}
		if r.hasPointer && !r.facts.M4Resolves {
			cl.BrokenPointers++
		}
		if s := r.facts.Source; s.Kind == "string" && s.Str != "" {
			cl.Sourced++
			sources = append(sources, s.Str)
		}
		if r.facts.TemplateID.Set {
			cl.WithTemplateID++
			tids = append(tids, r.raw.Get("template_id").Identity())
		}
		if r.facts.BaseTemplateID.Set {
			cl.WithBaseTemplateID++
			btids = append(btids, r.raw.Get("base_template_id").Identity())
		}
	}
	cl.DistinctScopes, cl.KeySets, cl.DistinctSources = distinct(scopes), distinct(keySets), distinct(sources)
	cl.TemplateIDs, cl.BaseTemplateIDs = distinct(tids), distinct(btids)
	st.scratch = [5][]string{scopes, keySets, sources, tids, btids}
	if x.letta {
		cl.DisjointPair = disjointPair(x, copies)
	}
	if st.clAct == nil {
		st.clAct = &rules.ClusterActivation{Scope: x.scope, Obs: st.opts.Observer}
	}
	act := st.clAct
	act.Cluster = &cl
	d, err := ps.EvalCluster(act)
	if err != nil || !d.Forms {
		return nil, "", err
	}
	if d.TemplateLineage {
		st.lineage++
		return nil, "", nil
	}
	if !d.B5Runs {
		st.b5NotRun++
	}
	if st.opts.explain != nil {
		if err := st.explainCluster(members, act); err != nil {
			return nil, "", err
		}
	}
	p := d.Rule
	cr := &ClusterReport{Classification: p.Class, DecidedBy: p.ID, Statement: p.Statement, Reason: p.Reason,
		DistinctScopes: int(cl.DistinctScopes)}
	if act.B5 {
		cr.DistinctSources = intp(int(cl.DistinctSources))
	}
	cr.Members = make([]Member, 0, len(members))
	for _, i := range members {
		r := &x.records[i]
		cr.Members = append(cr.Members, Member{ID: r.id, Scope: r.facts.ScopeString, Global: r.facts.Global,
			Covered: !r.facts.Global && r.covered})
	}
	slices.SortFunc(cr.Members, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	if p.Refer {
		for _, i := range copies {
			st.referrals = append(st.referrals, x.records[i].id)
		}
	}
	return cr, p.Class, nil
}

// distinct counts the distinct strings of ss, which it sorts.
func distinct(ss []string) int64 {
	sort.Strings(ss)
	n := int64(0)
	for i := range ss {
		if i == 0 || ss[i] != ss[i-1] {
			n++
		}
	}
	return n
}

// disjointPair reports whether two copies have disjoint scope sets (L-2).
func disjointPair(x *export, copies []int) bool {
	for a := 0; a < len(copies); a++ {
		sa := x.records[copies[a]].set
		for b := a + 1; b < len(copies); b++ {
			if disjoint(sa, x.records[copies[b]].set) {
				return true
			}
		}
	}
	return false
}

// disjoint compares two sorted sets.
func disjoint(a, b []string) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			return false
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return true
}

// compareIDs orders sorted id lists element by element, a prefix first.
func compareIDs(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := strings.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// compareMemberIDs is compareIDs over the ids of sorted member lists.
func compareMemberIDs(a, b []Member) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := strings.Compare(a[i].ID, b[i].ID); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// fillConflicts computes factor scope_conflicts over all records.
func (st *state) fillConflicts(rep *Report) error {
	ps, x := st.ps, st.x
	w := ps.Criteria().Words
	if g := st.gateFor("scope_conflicts"); g != nil {
		rep.Factors.ScopeConflicts = ScopeConflicts{Status: w.NotAssessable, Reason: g.Reason}
		return nil
	}
	conflicts := ps.Conflicts()
	by, recs := map[string]int{}, map[string][]string{}
	for _, c := range conflicts {
		by[c.ID], recs[c.ID] = 0, []string{}
	}
	total := 0
	for i := range x.records {
		if st.applies[i] == 0 {
			continue
		}
		r := &x.records[i]
		st.act.Restore(&r.facts, r.live, st.slots[i])
		failed, err := ps.EvalConflicts(st.act, st.applies[i])
		if err != nil {
			return err
		}
		for j, c := range conflicts {
			if failed&(1<<j) != 0 {
				by[c.ID]++
				recs[c.ID] = append(recs[c.ID], r.id)
				total++
			}
		}
	}
	for _, ids := range recs {
		sort.Strings(ids)
	}
	refs := uniqueSorted(st.referrals)
	rep.Factors.ScopeConflicts = ScopeConflicts{Status: w.Assessable, Conflicts: intp(total), BySubcheck: by, Records: recs, Referrals: &refs}
	return nil
}

func uniqueSorted(in []string) []string {
	out := append([]string{}, in...)
	sort.Strings(out)
	n := 0
	for i, s := range out {
		if i == 0 || s != out[n-1] {
			out[n] = s
			n++
		}
	}
	return out[:n]
}

// groupKey is one duplicates group: a partition's content key, scoped groups also by tuple.
type groupKey struct {
	partition uint8
	tid, cid  int32
}

// dupIndexPool holds the group indexes of fillDuplicates, reused across exports.
var dupIndexPool = sync.Pool{New: func() any { return map[groupKey]int{} }}

// fillDuplicates computes factor duplicates: per scope partition, live non-contested records
// grouped by content key (factor_rules, R-17, R-27, R-48).
func (st *state) fillDuplicates(rep *Report) {
	x := st.x
	w := st.ps.Criteria().Words
	// A group is one partition's content key, scoped groups also by scope tuple. Groups are
	// chained through next (record index order), so only groups of two or more allocate. A group
	// is its first record, last record and size: its partition and scope are its first record's,
	// so a max-size export's thousand groups take 12 KB, allocated once.
	type group struct{ first, last, size int32 }
	partition := func(r *record) (k uint8, name, scope string) {
		switch {
		case r.facts.Global:
			return 1, "global", r.facts.ScopeString
		case r.facts.Scoped:
			return 2, "scoped", r.facts.ScopeString
		}
		return 0, "unscoped", ""
	}
	index := dupIndexPool.Get().(map[groupKey]int)
	defer func() {
		clear(index)
		dupIndexPool.Put(index)
	}()
	groups := make([]group, 0, len(x.records))
	next := make([]int32, len(x.records))
	for i := range x.records {
		r := &x.records[i]
		if !r.live || r.contested {
			continue
		}
		k := groupKey{tid: -1, cid: r.cid}
		if k.partition, _, _ = partition(r); k.partition == 2 {
			k.tid = r.tid
		}
		next[i] = -1
		gi, ok := index[k]
		if !ok {
			index[k] = len(groups)
			groups = append(groups, group{first: int32(i), last: int32(i), size: 1})
			continue
		}
		g := &groups[gi]
		next[g.last] = int32(i)
		g.last = int32(i)
		g.size++
	}
	excess := 0
	clusters := []DuplicateCluster{}
	for _, g := range groups {
		if g.size < 2 {
			continue
		}
		excess += int(g.size) - 1
		ids := make([]string, 0, g.size)
		for j := g.first; j >= 0; j = next[j] {
			ids = append(ids, x.records[j].id)
		}
		sort.Strings(ids)
		_, name, scope := partition(&x.records[g.first])
		clusters = append(clusters, DuplicateCluster{Partition: name, Scope: scope, Count: int(g.size), Members: ids})
	}
	slices.SortFunc(clusters, func(a, b DuplicateCluster) int { return compareIDs(a.Members, b.Members) })
	for i := range clusters {
		clusters[i].Cluster = i + 1
	}
	rep.Factors.Duplicates = Duplicates{Status: w.Assessable, Excess: intp(excess), Live: intp(st.live),
		Rate: rate(excess, st.live, w.NoLiveRecords, w.NotAssessable), Clusters: &clusters}
}

// Stamp sets a report's check-end time and the verdict line that prints it, for a caller that
// takes the time when the check has ended (after Audit returned).
func Stamp(ps *rules.ProgramSet, rep *Report, checkEnd time.Time) {
	rep.CheckEnd = timestamp(checkEnd)
	rep.VerdictLine = verdictLine(ps.Criteria().Words, rep)
}

// verdictLine fills the published verdict grammar (verdict_grammar.line).
func verdictLine(w rules.Words, rep *Report) string {
	f := rep.Factors
	unscoped := w.NotAssessable
	if f.UnscopedRate.Status == w.Assessable {
		unscoped = f.UnscopedRate.Rate.Value
	}
	count := func(n *int) string {
		if n == nil {
			return w.NotAssessable
		}
		return strconv.Itoa(*n)
	}
	return strings.NewReplacer(
		"{records}", strconv.Itoa(rep.Records), "{live}", strconv.Itoa(rep.Live),
		"{unscoped}", unscoped, "{undeclared}", count(f.CrossScopeClusters.Undeclared),
		"{conflicts}", count(f.ScopeConflicts.Conflicts), "{duplicates}", count(f.Duplicates.Excess),
		"{check_end}", rep.CheckEnd,
	).Replace(w.Verdict)
}

// dropCoverageFacts leaves out of the coverage block the members the criteria name as facts of a
// factor that is NOT ASSESSABLE (coverage_facts, R-54): never a zero beside such a factor.
func dropCoverageFacts(c *rules.Criteria, rep *Report) {
	status := map[string]string{
		"scope_presence": rep.Factors.ScopePresence.Status, "unscoped_rate": rep.Factors.UnscopedRate.Status,
		"cross_scope_clusters": rep.Factors.CrossScopeClusters.Status, "scope_conflicts": rep.Factors.ScopeConflicts.Status,
		"duplicates": rep.Factors.Duplicates.Status,
	}
	for factor, members := range c.CoverageFacts {
		if status[factor] != c.Words.NotAssessable {
			continue
		}
		for _, m := range members {
			switch m {
			case "b5_not_run":
				rep.Coverage.B5NotRun = nil
			case "template_lineage":
				rep.Coverage.TemplateLineage = nil
			case "m3_declared_absent":
				rep.Coverage.M3DeclaredAbsent = nil
			case "marked_share":
				rep.Coverage.MarkedShare = nil
			}
		}
	}
}
