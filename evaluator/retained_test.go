package evaluator

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
	"unsafe"

	"github.com/scopehygiene/scope-hygiene/evaluator/internal/jsontree"
	"github.com/scopehygiene/scope-hygiene/gen"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// retained is what one pooled buffers set and one parser keep between exports, in bytes: the
// memory a server holds per CPU while idle, and the floor of its working set per evaluation.
type retained struct {
	slabs, records, facts, slots, other, maps, parser int
}

func (r retained) total() int {
	return r.slabs + r.records + r.facts + r.slots + r.other + r.maps + r.parser
}

func capBytes[T any](s []T) int {
	var z T
	return cap(s) * int(unsafe.Sizeof(z))
}

func measureRetained(b *buffers) retained {
	return retained{
		slabs:   b.slabs.Bytes(),
		records: capBytes(b.records),
		facts:   capBytes(b.facts) + capBytes(b.strs),
		slots:   capBytes(b.slots) + capBytes(b.applies),
		other:   capBytes(b.internedS),
		// The string tables keep their slots when emptied (strTable.reset).
		maps:   capBytes(b.byID.slots) + capBytes(b.contents.slots) + capBytes(b.interned.slots),
		parser: jsontree.ScratchBytes(),
	}
}

// auditRetained audits body twice through one buffers set (the second time with the slabs sized
// by the first, as in a steady load) and measures what the set and the parser keep afterwards.
func auditRetained(t testing.TB, ps *rules.ProgramSet, body []byte) retained {
	t.Helper()
	// The parser measured must be the one the audit put back: no collection may empty the pool,
	// and with one P the audit's Put and the measure's Get use the same per-P slot.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// Only this test's set in the pool, so that the one measured is the one just used.
	var idle []*buffers
	for len(freeBuffers) > 0 {
		idle = append(idle, <-freeBuffers)
	}
	defer func() {
		for _, b := range idle {
			select {
			case freeBuffers <- b:
			default:
			}
		}
	}()
	var r retained
	for range 2 {
		st, ref, err := prepare(ps, body, Options{}, false)
		if err != nil || ref != nil {
			t.Fatalf("prepare: %v %+v", err, ref)
		}
		if _, err := (&Prepared{st: st}).Audit(time.Unix(0, 0)); err != nil {
			t.Fatal(err)
		}
		b := <-freeBuffers
		r = measureRetained(b)
		freeBuffers <- b
	}
	return r
}

// TestRetainedPerExport reports (go test -v -run RetainedPerExport ./evaluator) the bytes one
// pooled buffers set and the parser scratch keep after a max-size export of each family.
func TestRetainedPerExport(t *testing.T) {
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	// The value tree's size is what the slabs scale with: keep it compact.
	if unsafe.Sizeof(jsontree.Value{}) > 16 || unsafe.Sizeof(jsontree.Member{}) > 32 {
		t.Errorf("value %d B, member %d B: the decoded tree grew", unsafe.Sizeof(jsontree.Value{}), unsafe.Sizeof(jsontree.Member{}))
	}
	t.Logf("value %d B, member %d B, record %d B, rules.Value %d B", unsafe.Sizeof(jsontree.Value{}), unsafe.Sizeof(jsontree.Member{}), unsafe.Sizeof(record{}), unsafe.Sizeof(rules.Value{}))
	for _, fam := range gen.MaxSizeFamilies {
		body := gen.MaxSizeExport(fam)
		r := auditRetained(t, ps, body)
		t.Logf("%-12s body %6d B: retained %8d B (%.1fx body) = slabs %d, records %d, facts %d, slots %d, interned %d, maps %d, parser %d",
			fam, len(body), r.total(), float64(r.total())/float64(len(body)), r.slabs, r.records, r.facts, r.slots, r.other, r.maps, r.parser)
	}
}
