package mpp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/scopehygiene/scope-hygiene/pack"
)

// isLabel says whether s is a positional input label (records-1, history-2, ...).
func isLabel(s string) bool {
	for _, r := range pack.InputRoles {
		if n, ok := strings.CutPrefix(s, r+"-"); ok {
			k, err := strconv.Atoi(n)
			return err == nil && k >= 1 && strconv.Itoa(k) == n
		}
	}
	return false
}

// recordColumns are the columns of a record index row; a row's index in its part is its position.
var recordColumns = []string{"id", "class", "source_file", "location", "source_sha256", "record_sha256"}

// recordIndex is the record index file: rows grouped by part, in index order.
type recordIndex struct {
	Kind    string            `json:"kind"`
	Columns []string          `json:"columns"`
	Parts   []recordIndexPart `json:"parts"`
}

type recordIndexPart struct {
	Part string      `json:"part"`
	Rows [][6]string `json:"rows"`
}

// marshalRecordIndex writes the record index of recs (in part and index order).
func marshalRecordIndex(recs []Record) ([]byte, error) {
	ix := recordIndex{Kind: "record_index", Columns: recordColumns, Parts: []recordIndexPart{}}
	for _, r := range recs {
		if n := len(ix.Parts); n == 0 || ix.Parts[n-1].Part != r.Part {
			ix.Parts = append(ix.Parts, recordIndexPart{Part: r.Part})
		}
		p := &ix.Parts[len(ix.Parts)-1]
		if r.Index != len(p.Rows) {
			return nil, errors.New("pack: record index: records out of index order")
		}
		p.Rows = append(p.Rows, [6]string{r.ID, r.Class, r.SourceFile, r.Location, r.SourceSHA256, r.RecordSHA256})
	}
	return marshalLine(ix)
}

// marshalLine is v's compact JSON (pack.MarshalCompact) ending in a newline: a file a person
// may also read.
func marshalLine(v any) ([]byte, error) {
	b, err := pack.MarshalCompact(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParseRecordIndex reads a record index (records.json): its columns exactly as written, every
// row six strings; a record's index is its row's position in its part.
func ParseRecordIndex(b []byte) ([]Record, error) {
	var ix recordIndex
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ix); err != nil || ix.Kind != "record_index" || strings.Join(ix.Columns, ",") != strings.Join(recordColumns, ",") {
		return nil, errors.New("pack: not a record index")
	}
	out := []Record{}
	seen := map[string]bool{}
	for _, p := range ix.Parts {
		if seen[p.Part] {
			return nil, errors.New("pack: record index: a part is listed twice")
		}
		seen[p.Part] = true
		for i, r := range p.Rows {
			out = append(out, Record{ID: r[0], Part: p.Part, Index: i, Class: r[1], SourceFile: r[2], Location: r[3], SourceSHA256: r[4], RecordSHA256: r[5]})
		}
	}
	return out, nil
}

// LoadRecordIndex loads m's record index from a package's files when the member is present and
// its bytes are the ones the manifest lists (otherwise m.Records stays empty).
func LoadRecordIndex(files map[string][]byte, m *Manifest) {
	for _, mem := range m.Members {
		if mem.Role != RoleRecordIndex {
			continue
		}
		if b, ok := files[mem.Path]; ok && pack.SHA256Hex(b) == mem.SHA256 {
			if recs, err := ParseRecordIndex(b); err == nil {
				m.Records = recs
			}
		}
	}
}
