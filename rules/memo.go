package rules

import (
	"encoding/binary"
	"reflect"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
)

// Memoization of the fused per-record programs. A fused program is a pure function of the record
// facts it reads, of `live`, and of the predicate values it reads; family, form and variant are
// fixed within one export. So two records of one export that agree on exactly those inputs get
// the same result, and the second evaluation is a map lookup. The inputs are read off the checked
// AST at load, so the key can never miss an input the program uses.

// projection is the set of inputs one fused program reads.
type projection struct {
	fields []int // indices of Record fields the program selects
	live   bool  // reads `live`
	slots  []int // indices into recordPreds of the predicates it reads
	// whole is true when the program uses `record` other than to select a field: its inputs
	// are then the whole record, and it is not memoized.
	whole bool
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
	var p projection
	seenField, seenSlot := map[int]bool{}, map[int]bool{}
	recordIdents, recordSelects := 0, 0
	for _, e := range celast.MatchDescendants(celast.NavigateAST(ast.NativeRep()), celast.AllMatcher()) {
		switch e.Kind() {
		case celast.SelectKind:
			sel := e.AsSelect()
			if sel.Operand().Kind() == celast.IdentKind && sel.Operand().AsIdent() == "record" {
				recordSelects++
				i, ok := recordFieldIndex[sel.FieldName()]
				if !ok {
					p.whole = true
				}
				if ok && !seenField[i] {
					seenField[i] = true
					p.fields = append(p.fields, i)
				}
			}
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
		}
	}
	if recordIdents != recordSelects {
		p.whole = true
	}
	return p
}

// key writes the projection of the activation's current record into buf.
func (p *projection) key(a *RecordActivation, buf []byte) []byte {
	rv := reflect.ValueOf(a.Record).Elem()
	for _, i := range p.fields {
		f := rv.Field(i)
		switch f.Kind() {
		case reflect.Bool:
			buf = append(buf, boolByte(f.Bool()))
		case reflect.Int64:
			buf = binary.AppendVarint(buf, f.Int())
		case reflect.String:
			buf = appendString(buf, f.String())
		case reflect.Pointer:
			v := f.Interface().(*Value)
			buf = appendString(buf, v.Kind)
			buf = append(buf, boolByte(v.Present), boolByte(v.Set), boolByte(v.Bool))
			buf = appendString(buf, v.Str)
			buf = binary.AppendVarint(buf, v.Items)
			buf = binary.AppendUvarint(buf, uint64(len(v.Strs)))
			for _, s := range v.Strs {
				buf = appendString(buf, s)
			}
		}
	}
	if p.live {
		buf = append(buf, boolByte(a.Live))
	}
	for _, i := range p.slots {
		buf = append(buf, boolByte(a.vals[i]))
	}
	return buf
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

// memo caches one fused program's results within one export.
type memo struct {
	results map[string][]bool
}

// lookup returns the cached result for key, if any.
func (m *memo) lookup(key []byte) ([]bool, bool) {
	if m.results == nil {
		return nil, false
	}
	r, ok := m.results[string(key)]
	return r, ok
}

func (m *memo) store(key []byte, vals []bool) {
	if m.results == nil {
		m.results = map[string][]bool{}
	}
	m.results[string(key)] = append([]bool(nil), vals...)
}
