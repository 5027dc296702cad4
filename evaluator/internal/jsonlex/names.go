package jsonlex

import "github.com/scopehygiene/scope-hygiene/evaluator/internal/jsonstr"

// This file reads member names and keeps each open object's names for the duplicate check.

// fpBit is a name's bit in frame.seen, from the fingerprint's high bits after a multiply (its
// low bits are the length's and the first bytes', which the names of one object often share).
func fpBit(fp uint64) uint64 { return 1 << ((fp * 0x9e3779b97f4a7c15) >> 58) }

// name reads the member name at i, checks that the open object does not have it yet, and reads
// the colon after it: it returns the name, its fingerprint and where the member's value may start.
func (r *Reader) name(i int) (string, uint64, int, bool) {
	src := r.src
	if i >= len(src) || src[i] != '"' {
		return "", 0, 0, false
	}
	var name string
	var ref nameRef
	j, fp := jsonstr.PlainName(src, i+1)
	switch {
	case j < len(src) && src[j] == '"':
		name, ref, i = src[i+1:j], nameRef{off: int32(i + 1), n: int32(j - i - 1), fp: fp}, j+1
	case j < len(src) && src[j] == '\\':
		var ok bool
		if name, i, ok = r.escaped(i+1, j); !ok {
			return "", 0, 0, false
		}
		ref = r.kept(name)
	default:
		return "", 0, 0, false
	}
	if !r.unique(name, ref) {
		return "", 0, 0, false
	}
	if i < len(src) && src[i] <= ' ' {
		i = skipSpace(src, i)
	}
	if i >= len(src) || src[i] != ':' {
		return "", 0, 0, false
	}
	return name, ref.fp, i + 1, true
}

// unique records name, whose reference is ref, among the open object's names, reporting whether
// it was not there yet.
func (r *Reader) unique(name string, ref nameRef) bool {
	f := &r.stack[len(r.stack)-1]
	own := r.names[f.names:]
	if f.set == 0 && len(own) < dupScanMax {
		bit := fpBit(ref.fp)
		if f.seen&bit != 0 {
			for k := range own {
				if own[k].fp == ref.fp && r.nameOf(own[k]) == name {
					return false
				}
			}
		}
		f.seen |= bit
		r.names = append(r.names, ref)
		return true
	}
	if f.set == 0 {
		// Sets are kept by depth and never dropped, so that a pooled reader reuses them.
		for len(r.sets) < len(r.stack) {
			r.sets = append(r.sets, map[string]struct{}{})
		}
		f.set = len(r.stack)
		for _, n := range own {
			r.sets[f.set-1][r.nameOf(n)] = struct{}{}
		}
	}
	set := r.sets[f.set-1]
	if _, dup := set[name]; dup {
		return false
	}
	set[name] = struct{}{}
	return true
}

// kept is the nameRef of a name that had escapes: its unescaped copy is kept beside the stack.
func (r *Reader) kept(name string) nameRef {
	r.escNames = append(r.escNames, name)
	return nameRef{off: -int32(len(r.escNames)), n: int32(len(name)), fp: jsonstr.Fingerprint(name)}
}

func (r *Reader) nameOf(n nameRef) string {
	if n.off < 0 {
		return r.escNames[-n.off-1]
	}
	return r.src[n.off : n.off+n.n]
}
