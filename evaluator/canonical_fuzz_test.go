package evaluator_test

import (
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator"
)

// FuzzReportCanonical: for any export that audits, the report's own canonical form is the JCS
// reference's, and the place it gives for a member is where JCS puts it. Report strings come from
// the export (ids, scope values, keys), so the fuzzer reaches the writer's escaping with whatever
// bytes a caller can send; the structured builder reaches clusters, conflicts and duplicates.
func FuzzReportCanonical(f *testing.F) {
	for _, s := range []any{
		X("mem0", ca("shared", true), cb("origin_claim_id", "a"), cc("source", "s"), gl("g")),
		X("zep_graphiti", R("a\u2028\"\\", "x", "group_id", "g\t1"), R("b", "x", "group_id", "g\u00002")),
		X("letta", L("a", "x", at("a1", "a2")), L("b", "x", at("a3"), "template_id", "t"), R("p", "y", "file_id", "f")),
		canaryExport("generic", "claim-jsonl", "hash_only"),
	} {
		f.Add(marshal(f, s))
	}
	ps := shipped(f)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, body := range [][]byte{data, structured(data)} {
			rep, ref, err := evaluator.Audit(ps, body, now)
			if err != nil || ref != nil {
				continue
			}
			checkCanonical(t, "fuzz", rep)
		}
	})
}
