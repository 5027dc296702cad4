package portability

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/pack/mpp"
)

// Package is one package revision as its folder holds it: the sealed files (manifest,
// signature, members) and the event log.
type Package struct {
	Files map[string][]byte
	Log   []byte
}

// State is a package revision replayed from its log. Only events signed by a trusted key change
// it; an untrusted event is counted and listed, never promoted. A withdrawal or disposal claimed
// by any event, trusted or not, is kept in ClosedClaim, because closing never promotes.
type State struct {
	PackageID   string
	Revision    int
	RevisionRef string // "sha256:" and the hex SHA-256 of the manifest bytes
	Manifest    *mpp.Manifest
	Lifecycle   string
	ClosedClaim string // withdrawn or disposed, as claimed by any event in the log
	Events      []LoggedEvent
	Head        string // the last line's reference ("" for an empty log)
	Untrusted   int
	Problems    []string

	recorded     map[string]int
	Describe     *DescribeRecord
	Bind         *BindRecord
	Seal         *SealRecord
	Conditions   *ConditionsRecord
	Preflight    *PreflightRecord
	Assessments  []AssessRecord
	Attempts     map[string]AttemptRecord
	Receipts     []ReceiptRecord
	SupersededBy string
}

// Open replays a package revision's log against its manifest, checking event signatures with
// trusted. A log that does not parse or chain is an error; a manifest that does not parse is
// an error. Events that name another package or revision are problems and change nothing.
func Open(p Package, trusted []ed25519.PublicKey) (*State, error) {
	mb, ok := p.Files[mpp.ManifestName]
	if !ok {
		return nil, fmt.Errorf("portability: %s missing", mpp.ManifestName)
	}
	var m mpp.Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		return nil, fmt.Errorf("portability: %s is not a package manifest", mpp.ManifestName)
	}
	mpp.LoadRecordIndex(p.Files, &m)
	st := &State{
		PackageID: m.PackageID, Revision: m.Revision, RevisionRef: "sha256:" + pack.SHA256Hex(mb), Manifest: &m,
		Lifecycle: lifecycle.Initial, recorded: map[string]int{}, Attempts: map[string]AttemptRecord{},
	}
	evs, err := ParseLog(p.Log, trusted)
	st.Events = evs
	if len(evs) > 0 {
		st.Head = evs[len(evs)-1].Ref
	}
	if err != nil {
		return st, err
	}
	for _, e := range evs {
		st.replay(e)
	}
	return st, nil
}

// replay applies one logged event to the state.
func (st *State) replay(e LoggedEvent) {
	bad := func(f string, a ...any) {
		st.Problems = append(st.Problems, fmt.Sprintf("event %d (%s): ", e.Seq, e.Op)+fmt.Sprintf(f, a...))
	}
	if e.PackageID != st.PackageID || e.Revision != st.Revision || e.RevisionRef != st.RevisionRef {
		bad("names package revision %d %s, not this one (the sealed bytes changed, or the log belongs to another revision)", e.Revision, e.RevisionRef)
		return
	}
	if (e.Op == "withdraw" || e.Op == "dispose") && e.Result == ResultRecorded {
		if st.ClosedClaim != "disposed" {
			st.ClosedClaim = map[string]string{"withdraw": "withdrawn", "dispose": "disposed"}[e.Op]
		}
	}
	if !e.Trusted {
		st.Untrusted++
		bad("signed by %s, not a trusted key: it changes nothing", e.Signer)
		return
	}
	if e.Result == ResultRefused {
		return
	}
	if err := st.allowed(e.Op, e.ActorRole); err != nil {
		bad("%v", err)
		return
	}
	o, _ := lifecycle.Op(e.Op)
	if e.StateBefore != st.Lifecycle || (o.To != "" && e.StateAfter != o.To) || (o.To == "" && e.StateAfter != st.Lifecycle) {
		bad("records state %s to %s; the replayed state is %s", e.StateBefore, e.StateAfter, st.Lifecycle)
		return
	}
	if err := st.absorb(e.Op, e.Result, e.Record); err != nil {
		bad("%v", err)
		return
	}
	st.recorded[e.Op]++
	if o.To != "" {
		st.Lifecycle = o.To
	}
}

// allowed checks an operation against the lifecycle: known, the role may run it, the state
// allows it, it has not run already if it runs once, what it needs is recorded.
func (st *State) allowed(op, role string) error {
	o, ok := lifecycle.Op(op)
	if !ok {
		return fmt.Errorf("operation %q is not in the lifecycle profile (denied by default)", op)
	}
	if !slices.Contains(o.Roles, role) {
		return fmt.Errorf("role %q may not %s (the profile allows %v)", role, op, o.Roles)
	}
	if !slices.Contains(o.From, st.Lifecycle) {
		return fmt.Errorf("%s is not allowed in state %s", op, st.Lifecycle)
	}
	if o.Once && st.recorded[op] > 0 {
		if op == "conditions" {
			return fmt.Errorf("conditions are attached already: a change of audience is a new revision (supersede)")
		}
		return fmt.Errorf("%s is recorded already for this revision", op)
	}
	for _, a := range o.After {
		if st.recorded[a] == 0 {
			return fmt.Errorf("%s needs %s recorded first", op, a)
		}
	}
	return nil
}

// absorb keeps the record of an accepted event in the state.
func (st *State) absorb(op, result string, rec json.RawMessage) error {
	dec := func(v any) error {
		if err := json.Unmarshal(rec, v); err != nil {
			return fmt.Errorf("its record is not a %s record", op)
		}
		return nil
	}
	switch op {
	case "describe":
		st.Describe = &DescribeRecord{}
		return dec(st.Describe)
	case "bind":
		st.Bind = &BindRecord{}
		return dec(st.Bind)
	case "seal":
		st.Seal = &SealRecord{}
		return dec(st.Seal)
	case "assess":
		var a AssessRecord
		if err := dec(&a); err != nil {
			return err
		}
		st.Assessments = append(st.Assessments, a)
	case "conditions":
		st.Conditions = &ConditionsRecord{}
		return dec(st.Conditions)
	case "preflight":
		st.Preflight = &PreflightRecord{}
		return dec(st.Preflight)
	case "attempt":
		var a AttemptRecord
		if err := dec(&a); err != nil {
			return err
		}
		if _, dup := st.Attempts[a.AttemptID]; dup || a.AttemptID == "" {
			return fmt.Errorf("attempt id empty or repeated")
		}
		st.Attempts[a.AttemptID] = a
	case "receipt":
		var r ReceiptRecord
		if err := dec(&r); err != nil {
			return err
		}
		st.Receipts = append(st.Receipts, r)
	case "supersede":
		var s SupersedeRecord
		if err := dec(&s); err != nil {
			return err
		}
		st.SupersededBy = s.SuccessorRevisionRef
	}
	return nil
}

// Acceptable says whether the package revision may verify as acceptable: not withdrawn or
// disposed (by a trusted event or by any claim), and in a state the profile accepts.
func (st *State) Acceptable() bool {
	return st.ClosedClaim == "" && lifecycle.IsAcceptable(st.Lifecycle)
}

// ShownState is the state to show: the closed claim when there is one.
func (st *State) ShownState() string {
	if st.ClosedClaim != "" && !lifecycle.IsClosed(st.Lifecycle) {
		return st.ClosedClaim + " (claimed by an untrusted event)"
	}
	return st.Lifecycle
}

func parseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}
