package rules

import (
	"encoding/binary"
	"reflect"
	"unsafe"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
)

// Memoization of the fused per-record programs. A fused program is a pure function of the record
// facts it reads, of `live`, and of the predicate values it reads; family, form and variant are
// fixed within one export. So two records of one export that agree on exactly those inputs get
// the same result, and the second evaluation is a map lookup. The inputs are read off the checked
// AST at load, down to the member of a Value a program selects (`record.invalid_at.set` reads one
// bit, not the timestamp), so the key can never miss an input the program uses.
//
// When the AST shows that every string the program reads is only compared for equality (with
// another input, with a literal, or with family/form/variant), the program's result cannot change
// under a renaming of the strings that keeps equal strings equal, distinct strings distinct, and
// leaves the literals alone. Such a program is keyed by the equality pattern of its strings: a
// literal (or family, form, variant) verbatim, any other string by the order of its first
// occurrence in the key. Records that differ only in their scope names then share one
// evaluation.

// The members of a Value a program may read, as bits of valueUse.subs.
const (
	subKind = 1 << iota
	subPresent
	subSet
	subStr
	subBool
	subStrs
	subItems
	subAll = 1<<iota - 1
)

var valueSubs = map[string]uint8{"kind": subKind, "present": subPresent, "set": subSet, "str": subStr,
	"bool": subBool, "strs": subStrs, "items": subItems}

// fieldUse is one Record field a program reads: where it is, what it is, and for a *Value field
// which of its members.
type fieldUse struct {
	index int
	off   uintptr
	kind  reflect.Kind
	subs  uint8
}

// projection is the set of inputs one fused program reads.
type projection struct {
	fields []fieldUse // Record fields the program selects, in first-use order
	live   bool       // reads `live`
	slots  []int      // indices into recordPreds of the predicates it reads
	// whole is true when the program uses `record` other than to select a field: its inputs
	// are then the whole record, and it is not memoized.
	whole bool
	// canon is true when strings are compared for equality only; literals are the program's
	// string literals, which keep their identity in the key.
	canon    bool
	literals map[string]bool
	litLens  uint64 // bit n: a literal of n bytes exists (bit 63 also for every longer one)
	// byLen lists the literals by their length (the last entry: every longer one), so that a
	// string is told from them by a comparison or two, not by hashing it.
	byLen [64][]string
	// word is true when every input is a flag (a bool field; the kind, present, set or bool of
	// a *Value field; `live`; a slot) and all of them fit one word: the key is then that word
	// (wordKey), built without a byte or a string. wordBit is where each field's bits start;
	// liveBit and slotBit are where `live` and the first slot go.
	word             bool
	wordBit          []uint8
	liveBit, slotBit uint8
}

// layoutWord decides whether the projection is keyed by a word, and lays the word out: a bool
// field is one bit; a *Value field is the shared absent member's flag, then three bits of kind
// (kindCode) and one bit for each of present, set and bool it reads, at places fixed by the
// projection, so that the word says which bits of a field mean anything.
func (p *projection) layoutWord() {
	p.word, p.wordBit = false, nil
	if p.whole {
		return
	}
	pos := 0
	bits := make([]uint8, len(p.fields))
	for i, f := range p.fields {
		bits[i] = uint8(min(pos, 255))
		switch f.kind {
		case reflect.Bool:
			pos++
		case reflect.Pointer:
			if f.subs&(subStr|subStrs|subItems) != 0 {
				return
			}
			pos++
			if f.subs&subKind != 0 {
				pos += 3
			}
			for _, m := range []uint8{subPresent, subSet, subBool} {
				if f.subs&m != 0 {
					pos++
				}
			}
		default:
			return // a string or a count
		}
	}
	p.liveBit = uint8(min(pos, 255))
	if p.live {
		pos++
	}
	p.slotBit = uint8(min(pos, 255))
	if pos+len(p.slots) > 64 {
		return
	}
	p.word, p.wordBit = true, bits
}

// wordKey is the key of a word projection (layoutWord) for the activation's current record; ok
// is false for a record with a kind that is none of the seven (then the byte key serves).
func (p *projection) wordKey(a *RecordActivation) (w uint64, ok bool) {
	base := unsafe.Pointer(a.Record)
	for i := range p.fields {
		f := &p.fields[i]
		at := unsafe.Add(base, f.off)
		b := p.wordBit[i] & 63
		if f.kind == reflect.Bool {
			if *(*bool)(at) {
				w |= 1 << b
			}
			continue
		}
		v := *(**Value)(at)
		if v == AbsentValue {
			w |= 1 << b
			continue
		}
		b++
		if f.subs&subKind != 0 {
			c := kindCode(v.Kind)
			if c == 0 {
				return 0, false
			}
			w |= c << (b & 63)
			b += 3
		}
		if f.subs&subPresent != 0 {
			if v.Present {
				w |= 1 << (b & 63)
			}
			b++
		}
		if f.subs&subSet != 0 {
			if v.Set {
				w |= 1 << (b & 63)
			}
			b++
		}
		if f.subs&subBool != 0 && v.Bool {
			w |= 1 << (b & 63)
		}
	}
	if p.live && a.Live {
		w |= 1 << (p.liveBit & 63)
	}
	for k, i := range p.slots {
		if a.vals[i] {
			w |= 1 << ((int(p.slotBit) + k) & 63)
		}
	}
	return w, true
}

// kindCode numbers the seven names of Value.Kind from 1 (the three bits a kind is keyed by in a
// word, the low bits of its kindByte), or 0 for any other string.
func kindCode(s string) uint64 {
	switch len(s) {
	case 4:
		if s == "null" {
			return 2
		}
		if s == "bool" {
			return 4
		}
	case 5:
		if s == "array" {
			return 6
		}
	case 6:
		switch s {
		case "absent":
			return 1
		case "string":
			return 3
		case "number":
			return 5
		case "object":
			return 7
		}
	}
	return 0
}

// indexLiterals fills byLen from literals.
func (p *projection) indexLiterals() {
	p.byLen = [64][]string{}
	for s := range p.literals {
		n := min(len(s), 63)
		p.byLen[n] = append(p.byLen[n], s)
	}
}

var recordStruct = reflect.TypeOf(Record{})

// recordFieldIndex maps a `cel` tag of Record to its field index.
var recordFieldIndex = func() map[string]int {
	m := map[string]int{}
	for i := 0; i < recordStruct.NumField(); i++ {
		if tag := recordStruct.Field(i).Tag.Get("cel"); tag != "" {
			m[tag] = i
		}
	}
	return m
}()

// projectionOf reads the inputs of a checked program. slotIndex names the predicates.
func projectionOf(ast *cel.Ast, slotIndex map[string]int) projection {
	p := projection{literals: map[string]bool{}}
	at := map[int]int{} // Record field index -> index in p.fields
	use := func(i int) *fieldUse {
		if k, ok := at[i]; ok {
			return &p.fields[k]
		}
		f := recordStruct.Field(i)
		at[i] = len(p.fields)
		p.fields = append(p.fields, fieldUse{index: i, off: f.Offset, kind: f.Type.Kind()})
		return &p.fields[len(p.fields)-1]
	}
	seenSlot := map[int]bool{}
	recordIdents, recordSelects := 0, 0
	p.canon = true
	for _, e := range celast.MatchDescendants(celast.NavigateAST(ast.NativeRep()), celast.AllMatcher()) {
		switch e.Kind() {
		case celast.SelectKind:
			sel := e.AsSelect()
			if sel.Operand().Kind() != celast.IdentKind || sel.Operand().AsIdent() != "record" {
				break
			}
			recordSelects++
			i, ok := recordFieldIndex[sel.FieldName()]
			if !ok {
				p.whole = true
				break
			}
			f := use(i)
			if f.kind != reflect.Pointer {
				break
			}
			// A *Value field: which members are read. Anything but a member selection reads all.
			sub := uint8(subAll)
			if parent, ok := e.Parent(); ok && parent.Kind() == celast.SelectKind && !parent.AsSelect().IsTestOnly() {
				if s, ok := valueSubs[parent.AsSelect().FieldName()]; ok {
					sub = s
				}
			}
			f.subs |= sub
		case celast.IdentKind:
			name := e.AsIdent()
			if name == "record" {
				recordIdents++
			}
			if name == "live" {
				p.live = true
			}
			if i, ok := slotIndex[name]; ok && !seenSlot[i] {
				seenSlot[i] = true
				p.slots = append(p.slots, i)
			}
		case celast.LiteralKind:
			if s, ok := e.AsLiteral().(types.String); ok {
				p.literals[string(s)] = true
				p.litLens |= 1 << min(len(s), 63)
			}
		}
		if !equalityOnly(e) {
			p.canon = false
		}
	}
	if recordIdents != recordSelects {
		p.whole = true
	}
	p.indexLiterals()
	p.layoutWord()
	return p
}

// equalityOnly reports whether node e, if it carries input strings, uses them only in equality:
// a string operand of ==, != or `in`; a list of strings that is a comprehension's range, the
// argument of size(), the right side of `in` or an operand of == / !=. Literals and lists of
// literals are constants. Anything else (concatenation, ordering, functions on strings, a string
// chosen by a conditional) makes the program keyed verbatim.
func equalityOnly(e celast.NavigableExpr) bool {
	t := e.Type()
	isString := t.IsExactType(types.StringType)
	isStrings := t.Kind() == types.ListKind && len(t.Parameters()) == 1 && t.Parameters()[0].IsExactType(types.StringType)
	if !isString && !isStrings {
		return true
	}
	switch e.Kind() {
	case celast.LiteralKind:
		return true
	case celast.ListKind:
		for _, el := range e.AsList().Elements() {
			if el.Kind() != celast.LiteralKind {
				return false
			}
		}
		return true
	}
	parent, ok := e.Parent()
	if !ok {
		return false // the program's own value is a string: not a predicate
	}
	switch parent.Kind() {
	case celast.CallKind:
		call := parent.AsCall()
		switch call.FunctionName() {
		case "_==_", "_!=_":
			return true
		case "@in":
			args := call.Args()
			return (isString && args[0].ID() == e.ID()) || (isStrings && len(args) == 2 && args[1].ID() == e.ID())
		case "size":
			return isStrings
		}
	case celast.ComprehensionKind:
		return isStrings && parent.AsComprehension().IterRange().ID() == e.ID() && !parent.AsComprehension().HasIterVar2()
	}
	return false
}

// keyState is the scratch of one key: the bytes and the strings met so far (canonical keys).
type keyState struct {
	buf  []byte
	seen []string
}

// key writes the projection of the activation's current record into a.ks.buf.
func (p *projection) key(a *RecordActivation) []byte {
	a.ks.buf, a.ks.seen = a.ks.buf[:0], a.ks.seen[:0]
	return p.appendKey(a)
}

// keyTagged is key after the number of the program it keys, so that one map holds the results
// of many programs.
func (p *projection) keyTagged(a *RecordActivation, num int) []byte {
	a.ks.buf, a.ks.seen = binary.AppendUvarint(a.ks.buf[:0], uint64(num)), a.ks.seen[:0]
	return p.appendKey(a)
}

// appendKey appends the projection of the activation's current record to a.ks.buf. Every bool
// field, and whether each *Value field is the shared absent member, is one bit of a word written
// last, in a width fixed by the number of fields: a record's many absent members and flags cost
// a compare each, not a byte each, and the word (read from the key's end) says which of the
// parts before it are there, so the key stays unambiguous.
func (p *projection) appendKey(a *RecordActivation) []byte {
	// The key is built in a local slice, handed to str and taken back around its calls: stores
	// into the activation per byte would make the compiler reload p.fields every field.
	ks := &a.ks
	buf, fields := ks.buf, p.fields
	base := unsafe.Pointer(a.Record)
	var bits uint64
	str := func(s string) {
		ks.buf = buf
		p.str(a, s)
		buf = ks.buf
	}
	for i := range fields {
		f := &fields[i]
		at := unsafe.Add(base, f.off)
		bit := uint64(1) << (uint(i) & 63) // TestKeyBitsFitAWord: i < 64
		switch f.kind {
		case reflect.Bool:
			if *(*bool)(at) {
				bits |= bit
			}
		case reflect.Int64:
			buf = binary.AppendVarint(buf, *(*int64)(at))
		case reflect.String:
			str(*(*string)(at))
		case reflect.Pointer:
			v := *(**Value)(at)
			if v == AbsentValue {
				// The shared absent member: its bit. Its strings ("absent", "") are keyed
				// verbatim wherever they occur (str), so they need no place in the pattern.
				bits |= bit
				continue
			}
			if f.subs&subKind != 0 {
				if b := kindByte(v.Kind); b != 0 {
					buf = append(buf, b)
				} else {
					buf = appendString(append(buf, 'L'), v.Kind)
				}
			}
			if f.subs&subPresent != 0 {
				buf = append(buf, boolByte(v.Present))
			}
			if f.subs&subSet != 0 {
				buf = append(buf, boolByte(v.Set))
			}
			if f.subs&subBool != 0 {
				buf = append(buf, boolByte(v.Bool))
			}
			if f.subs&subStr != 0 {
				str(v.Str)
			}
			if f.subs&subItems != 0 {
				buf = binary.AppendVarint(buf, v.Items)
			}
			if f.subs&subStrs != 0 {
				buf = binary.AppendUvarint(buf, uint64(len(v.Strs)))
				for _, s := range v.Strs {
					str(s)
				}
			}
		}
	}
	if p.live {
		buf = append(buf, boolByte(a.Live))
	}
	for _, i := range p.slots {
		buf = append(buf, boolByte(a.vals[i]))
	}
	if len(fields) <= 32 {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(bits))
	} else {
		buf = binary.LittleEndian.AppendUint64(buf, bits)
	}
	ks.buf = buf
	return buf
}

// str writes one string of the key: verbatim, or by its equality pattern (canon). The empty
// string and the kind names are always verbatim, as if they were literals: a finer key is still a
// sound one, and it lets the key give the shared absent member (whose kind and str are those) one
// bit, and every kind its name, without a place in the pattern.
func (p *projection) str(a *RecordActivation, s string) {
	ks := &a.ks
	if p.canon {
		// A string already in the pattern was not one keyed verbatim when it was placed.
		for i, t := range ks.seen {
			if len(t) == len(s) && t == s {
				ks.buf = appendPlace(ks.buf, i)
				return
			}
		}
		if !(s == "" || isKindName(s) || p.literal(s) || s == a.Family || s == a.Form || s == a.Variant) {
			ks.buf = appendPlace(ks.buf, len(ks.seen))
			ks.seen = append(ks.seen, s)
			return
		}
	}
	ks.buf = append(ks.buf, 'L')
	ks.buf = appendString(ks.buf, s)
}

// appendPlace appends a string's place in the equality pattern.
func appendPlace(buf []byte, i int) []byte {
	if i < 0x80 {
		return append(buf, 'O', byte(i))
	}
	return binary.AppendUvarint(append(buf, 'O'), uint64(i))
}

// literal reports whether s is one of the program's string literals. Most strings a record
// carries are not: their length alone says so, without hashing them.
func (p *projection) literal(s string) bool {
	n := min(len(s), 63)
	if p.litLens&(1<<n) == 0 {
		return false
	}
	for _, l := range p.byLen[n] {
		if l == s {
			return true
		}
	}
	return false
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// memo caches one fused program's results within one export: by the byte key, or by the word
// of a word projection.
type memo struct {
	results map[string][]bool
	words   map[uint64][]bool
}

// memoKey is where a fused program's result is stored: the word, when word is set, else s.
type memoKey struct {
	s    string
	w    uint64
	word bool
}

// lookup returns the cached result for key, if any.
func (m *memo) lookup(key []byte) ([]bool, bool) {
	if m.results == nil {
		return nil, false
	}
	r, ok := m.results[string(key)]
	return r, ok
}

func (m *memo) store(key memoKey, vals []bool) {
	if key.word {
		if m.words == nil {
			m.words = map[uint64][]bool{}
		}
		m.words[key.w] = append([]bool(nil), vals...)
		return
	}
	if m.results == nil {
		m.results = map[string][]bool{}
	}
	m.results[key.s] = append([]bool(nil), vals...)
}

// kindByte is the one byte a kind name is keyed by (never 'L', which opens a verbatim string),
// or 0 for any other string.
func kindByte(s string) byte {
	if c := kindCode(s); c != 0 {
		return 0xB0 | byte(c)
	}
	return 0
}

// isKindName reports whether s is one of the names of Value.Kind.
func isKindName(s string) bool { return kindCode(s) != 0 }
