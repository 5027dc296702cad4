package portability

import (
	_ "embed"
	"encoding/json"
	"slices"
)

//go:embed profile.json
var profileJSON []byte

// Lifecycle is the embedded lifecycle profile (profile.json).
type Lifecycle struct {
	Profile      string      `json:"profile"`
	Note         string      `json:"note"`
	States       []string    `json:"states"`
	Initial      string      `json:"initial_state"`
	Acceptable   []string    `json:"acceptable_states"`
	Closed       []string    `json:"closed_states"`
	Roles        []string    `json:"roles"`
	Operations   []Operation `json:"operations"`
	byOp         map[string]Operation
	stateAllowed map[string]bool
}

// Operation is one operation of the lifecycle: the roles that may run it, the states it runs
// from, the state it leads to (none: the state stays), whether it runs once per revision, and
// the operations that must be recorded before it.
type Operation struct {
	Op    string   `json:"op"`
	Roles []string `json:"roles"`
	From  []string `json:"from"`
	To    string   `json:"to,omitempty"`
	Once  bool     `json:"once,omitempty"`
	After []string `json:"after,omitempty"`
}

var lifecycle = mustLifecycle()

func mustLifecycle() *Lifecycle {
	var l Lifecycle
	if err := json.Unmarshal(profileJSON, &l); err != nil {
		panic("portability: embedded profile.json does not parse") // a build defect
	}
	l.byOp = map[string]Operation{}
	l.stateAllowed = map[string]bool{}
	for _, s := range l.States {
		l.stateAllowed[s] = true
	}
	for _, o := range l.Operations {
		l.byOp[o.Op] = o
	}
	return &l
}

// Profile returns the lifecycle profile the package is built on.
func Profile() *Lifecycle { return lifecycle }

// Op returns the operation named op, false when the profile has none (denied).
func (l *Lifecycle) Op(op string) (Operation, bool) {
	o, ok := l.byOp[op]
	return o, ok
}

// IsAcceptable says whether a package in state s may verify as acceptable.
func (l *Lifecycle) IsAcceptable(s string) bool { return slices.Contains(l.Acceptable, s) }

// IsClosed says whether state s closes local use of the package (withdrawn, disposed).
func (l *Lifecycle) IsClosed(s string) bool { return slices.Contains(l.Closed, s) }

// Ops lists the operation names in profile order.
func (l *Lifecycle) Ops() []string {
	out := make([]string, 0, len(l.Operations))
	for _, o := range l.Operations {
		out = append(out, o.Op)
	}
	return out
}
