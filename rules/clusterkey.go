package rules

import (
	"reflect"
	"unsafe"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
)

// The cluster memo's key. The cluster programs are pure functions of the Cluster facts, and the
// shipped ones use each count only to compare it (==, !=, <, <=, >, >=) with another count or with
// an integer literal. Such a program's result is a function of the bools and of the outcome of
// each of those comparisons, so clusters are keyed by exactly that: the sign of a - b for every
// pair (a, b) the program compares, not the counts themselves, and a max-size export's few hundred
// clusters share a handful of evaluations. The AST is read at load; a program that does anything
// else with a count (arithmetic, a conversion, a list) is keyed by its counts verbatim.

// operand is one side of a comparison: a count of Cluster (at its offset) or a literal.
type operand struct {
	off   uintptr
	lit   int64
	isLit bool
}

func (o operand) value(c unsafe.Pointer) int64 {
	if o.isLit {
		return o.lit
	}
	return *(*int64)(unsafe.Add(c, o.off))
}

// orderKey is the comparison key of the fused cluster program; ok is false when the program does
// not qualify (the memo then keys the Cluster as it is).
type orderKey struct {
	ok    bool
	pairs [][2]operand // every comparison of two integers, once each
}

// maxPairs is how many comparisons fit the key: two bits each in two int64 fields of Cluster.
const maxPairs = 62

var clusterStruct = reflect.TypeOf(Cluster{})

// orderKeyOf reads the checked AST of the fused cluster program.
func orderKeyOf(ast *cel.Ast) orderKey {
	k := orderKey{ok: true}
	seen := map[[2]operand]bool{}
	for _, e := range celast.MatchDescendants(celast.NavigateAST(ast.NativeRep()), celast.AllMatcher()) {
		t := e.Type()
		if t.IsExactType(types.DoubleType) || t.IsExactType(types.UintType) {
			return orderKey{}
		}
		if e.Kind() == celast.IdentKind && e.AsIdent() == "cluster" {
			if p, ok := e.Parent(); !ok || p.Kind() != celast.SelectKind {
				return orderKey{} // the cluster used whole
			}
		}
		if t.IsExactType(types.IntType) {
			if _, ok := operandOf(e); !ok || !comparedOnly(e) {
				return orderKey{}
			}
		}
		if e.Kind() != celast.CallKind || !isComparison(e.AsCall().FunctionName()) {
			continue
		}
		args := e.AsCall().Args()
		if len(args) != 2 {
			continue
		}
		// A comparison of two integers has two operands (every integer node is one, checked
		// above); one of bools is read as such.
		a, okA := operandOf(args[0])
		b, okB := operandOf(args[1])
		if !okA || !okB {
			continue
		}
		if p := [2]operand{a, b}; !seen[p] {
			seen[p] = true
			k.pairs = append(k.pairs, p)
		}
	}
	if len(k.pairs) > maxPairs {
		return orderKey{}
	}
	return k
}

// operandOf reads an integer node: a count selected from the cluster, or a literal.
func operandOf(e celast.Expr) (operand, bool) {
	switch e.Kind() {
	case celast.LiteralKind:
		v, ok := e.AsLiteral().(types.Int)
		return operand{lit: int64(v), isLit: true}, ok
	case celast.SelectKind:
		sel := e.AsSelect()
		if sel.IsTestOnly() || sel.Operand().Kind() != celast.IdentKind || sel.Operand().AsIdent() != "cluster" {
			return operand{}, false
		}
		f, ok := clusterField(sel.FieldName())
		if !ok || f.Type.Kind() != reflect.Int64 {
			return operand{}, false
		}
		return operand{off: f.Offset}, true
	}
	return operand{}, false
}

func isComparison(fn string) bool {
	switch fn {
	case "_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_":
		return true
	}
	return false
}

// comparedOnly reports whether e's parent compares it with ==, !=, <, <=, > or >=.
func comparedOnly(e celast.NavigableExpr) bool {
	p, ok := e.Parent()
	return ok && p.Kind() == celast.CallKind && isComparison(p.AsCall().FunctionName())
}

// clusterField is the Cluster field with the given `cel` tag.
func clusterField(tag string) (reflect.StructField, bool) {
	for i := 0; i < clusterStruct.NumField(); i++ {
		if f := clusterStruct.Field(i); f.Tag.Get("cel") == tag {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// clusterCode is a cluster's memo key under an order key: the sign of each compared pair (two
// bits each) and the bools. It is 24 bytes where the Cluster is 136, so the memo hashes and
// compares less.
type clusterCode struct {
	code            [2]uint64
	letta, disjoint bool
}

// code returns the memo key of c: the bools, and the sign of each compared pair (0 below, 1 equal,
// 2 above). Two clusters with equal keys agree on every comparison, hence on every program.
func (k *orderKey) code(c *Cluster) clusterCode {
	var code [2]uint64
	base := unsafe.Pointer(c)
	for i, p := range k.pairs {
		a, b := p[0].value(base), p[1].value(base)
		s := 1 + b2u(a > b) - b2u(a < b)
		code[(i/31)&1] |= s << (2 * (i % 31))
	}
	return clusterCode{code: code, letta: c.Letta, disjoint: c.DisjointPair}
}

// canon is code written as a Cluster: every count zeroed, the bools kept, and the signs in
// Copies and Globals.
func (k *orderKey) canon(c *Cluster) Cluster {
	x := k.code(c)
	return Cluster{Letta: x.letta, DisjointPair: x.disjoint, Copies: int64(x.code[0]), Globals: int64(x.code[1])}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
