package evaluator

import "strings"

// recordGroups chains records into groups in order of first appearance. A group is its first
// record, last record and size, and each record points to the next of its group, so the groups
// themselves are the only allocation (12 bytes each, sized once): a group's partition, scope and
// content key are its first record's.
type recordGroups struct {
	groups []recordGroup
	next   []int32 // per record, the next record of its group (-1: the last)
}

type recordGroup struct{ first, last, size int32 }

// recordGroups makes room for the export's records in at most maxGroups groups, reusing the
// export's buffers; putRecordGroups gives them back for the next grouping.
func (st *state) recordGroups(maxGroups int) recordGroups {
	b := st.x.b
	return recordGroups{groups: sized(b.groups, maxGroups), next: sized(b.next, len(st.x.records))[:len(st.x.records)]}
}

func (st *state) putRecordGroups(rg recordGroups) {
	st.x.b.groups, st.x.b.next = rg.groups[:0], rg.next[:0]
}

// add puts record i last in group g, or in a new group when g < 0, and returns the group's index.
func (rg *recordGroups) add(i, g int) int {
	rg.next[i] = -1
	if g < 0 {
		rg.groups = append(rg.groups, recordGroup{first: int32(i), last: int32(i), size: 1})
		return len(rg.groups) - 1
	}
	gr := &rg.groups[g]
	rg.next[gr.last] = int32(i)
	gr.last = int32(i)
	gr.size++
	return g
}

// compareIDs orders sorted lists by their elements' ids, element by element, a prefix first
//
func compareIDs[T any](a, b []T, id func(T) string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := strings.Compare(id(a[i]), id(b[i])); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}
