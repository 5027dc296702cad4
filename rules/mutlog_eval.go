package rules

import (
	"cel.dev/cel-go/interpreter"
)

// EventActivation is the input of one decision subject's predicates.
type EventActivation struct {
	Event  *LogEvent
	Forget *LogForget
	// Obs, when set, sees every evaluation (coverage).
	Obs   Observer
	names []string
	vals  []bool
	// memo holds each subject's values by its key (mutlog_memo.go), within one log; buf and seen
	// are the key's scratch.
	memo map[string][]bool
	buf  []byte
	seen []string
}

// ResolveName implements interpreter.Activation.
func (a *EventActivation) ResolveName(name string) (any, bool) {
	switch name {
	case "event":
		return a.Event, true
	case "forget":
		return a.Forget, true
	}
	for i, n := range a.names {
		if n == name && i < len(a.vals) {
			return a.vals[i], true
		}
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *EventActivation) Parent() interpreter.Activation { return nil }

func (a *EventActivation) observer() Observer { return a.Obs }

// Decide evaluates the predicates of one subject in order and returns their values, indexed like
// DecisionSlots(subject). Any run-time failure is a *RuleError.
//
// Within one activation (one log) the values are memoized by what the subject's predicates read,
// unless an observer must see every evaluation; the slice returned is then shared and must not be
// changed.
func (ms *MutLogSet) Decide(subject string, a *EventActivation) ([]bool, error) {
	u := ms.uses[subject]
	var key []byte
	if a.Obs == nil && u != nil && u.ok {
		key = u.key(subject, a)
		if v, ok := a.memo[string(key)]; ok {
			return v, nil
		}
	}
	a.names, a.vals = mutLogSlots[subject], a.vals[:0]
	for _, p := range ms.decisions[subject] {
		v, err := p.Bool(a)
		if err != nil {
			return nil, err
		}
		a.vals = append(a.vals, v)
	}
	out := append([]bool(nil), a.vals...)
	if key != nil {
		if a.memo == nil {
			a.memo = map[string][]bool{}
		}
		a.memo[string(key)] = out
	}
	return out, nil
}

// LogActivation is the input of the assessability gates; Counts is set for the fact gates only.
type LogActivation struct {
	Log    *LogFacts
	Counts *LogCounts
	Obs    Observer
}

// ResolveName implements interpreter.Activation.
func (a *LogActivation) ResolveName(name string) (any, bool) {
	switch name {
	case "log":
		return a.Log, true
	case "counts":
		if a.Counts != nil {
			return a.Counts, true
		}
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *LogActivation) Parent() interpreter.Activation { return nil }

func (a *LogActivation) observer() Observer { return a.Obs }

// Gate returns the first gate of factor that holds (nil: ASSESSABLE). With an observer every gate
// is evaluated, so coverage sees each one both ways.
func (ms *MutLogSet) Gate(factor string, a *LogActivation) (*GateProgram, error) {
	return firstGate(ms.gates[factor], a)
}

// DoesNotApply returns the first does_not_apply gate that holds (nil: the rules apply).
func (ms *MutLogSet) DoesNotApply(a *LogActivation) (*GateProgram, error) {
	return firstGate(ms.dna, a)
}

// FactGate returns the first gate of a gated fact that holds (nil: the fact is printed); a.Counts
// must be set.
func (ms *MutLogSet) FactGate(fact string, a *LogActivation) (*GateProgram, error) {
	return firstGate(ms.facts[fact], a)
}

func firstGate(gates []GateProgram, a *LogActivation) (*GateProgram, error) {
	var first *GateProgram
	for i := range gates {
		g := &gates[i]
		v, err := g.When.Bool(a)
		if err != nil {
			return nil, err
		}
		if v && first == nil {
			first = g
			if a.Obs == nil {
				break
			}
		}
	}
	return first, nil
}
