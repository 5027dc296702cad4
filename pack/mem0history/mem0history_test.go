package mem0history_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator/mutlog"
	"github.com/scopehygiene/scope-hygiene/pack/mem0history"
	"github.com/scopehygiene/scope-hygiene/rules"
)

const canaryText = "CANARYmemorytext51"

func rowsOf(rows ...map[string]any) []byte {
	var b bytes.Buffer
	for _, r := range rows {
		j, _ := json.Marshal(r)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func h(mem, event, at string, actor any) map[string]any {
	return map[string]any{"id": "h-" + mem + event + at, "memory_id": mem, "old_memory": canaryText, "new_memory": canaryText,
		"event": event, "created_at": at, "updated_at": nil, "is_deleted": 0, "actor_id": actor, "role": "user"}
}

// TestConvertOrdersAndNumbers: seq follows created_at (ties in table order), ADD/UPDATE are writes
// numbered per memory, DELETE is a forget, NONE is skipped and counted, no memory text is copied.
func TestConvertOrdersAndNumbers(t *testing.T) {
	in := rowsOf(
		h("m2", "UPDATE", "2025-06-01T10:00:00+00:00", "bob"),
		h("m1", "ADD", "2025-06-01T09:00:00+00:00", "alice"),
		h("m2", "ADD", "2025-06-01T09:00:00+00:00", nil),
		h("m2", "NONE", "2025-06-01T11:00:00+00:00", nil),
		h("m1", "DELETE", "2025-06-02T09:00:00+00:00", ""),
		map[string]any{"memory_id": "m3", "event": "ADD", "timestamp": "2025-05-01T00:00:00+00:00"},
	)
	ex, inv, err := mem0history.Convert(in)
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		seq     int
		op, mem string
		version int
		actor   string
	}
	var got []ev
	for _, e := range ex.Events {
		v := 0
		if e.Version != nil {
			v = *e.Version
		}
		got = append(got, ev{e.Seq, e.Op, e.Key.Name, v, e.Principal})
	}
	want := []ev{{1, "write", "m3", 1, ""}, {2, "write", "m1", 1, "alice"}, {3, "write", "m2", 1, ""}, {4, "write", "m2", 2, "bob"}, {5, "forget", "m1", 0, ""}}
	if len(got) != len(want) {
		t.Fatalf("events %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if inv.Rows != 6 || inv.SkippedRows["NONE"] != 1 || inv.Events["write"] != 4 || inv.Events["forget"] != 1 || inv.Memories != 3 || inv.RowsWithActor != 2 {
		t.Fatalf("inventory %+v", inv)
	}
	b, _ := json.Marshal(ex)
	ib, _ := json.Marshal(inv)
	if bytes.Contains(b, []byte(canaryText)) || bytes.Contains(ib, []byte(canaryText)) {
		t.Fatal("memory text copied")
	}
}

// TestConvertedLogIsAuditedHonestly: the engine states the reinsert and envelope factors NOT
// ASSESSABLE for a Mem0 history, and counts its forgets without an envelope.
func TestConvertedLogIsAuditedHonestly(t *testing.T) {
	src, err := os.ReadFile("../../criteria/forget-envelope.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := rules.LoadMutationLog("forget-envelope.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	ex, _, err := mem0history.Convert(rowsOf(h("m1", "ADD", "1", "a"), h("m1", "DELETE", "2", "a"), h("m9", "ADD", "3", "a")))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(ex)
	rep, ref, err := mutlog.Audit(ms, body, time.Now())
	if err != nil || ref != nil {
		t.Fatalf("audit: %v %v", err, ref)
	}
	for _, f := range []any{rep.Factors.ReinsertsAfterForget, rep.Factors.ReinsertsOutsideEnvelope, rep.Factors.AliasReinserts} {
		st, ok := f.(mutlog.Status)
		if !ok || st.Status != "NOT ASSESSABLE" || !strings.HasPrefix(st.Reason, "trivially satisfied") {
			t.Fatalf("a reinsert factor reads %+v", f)
		}
	}
	fe, ok := rep.Factors.ForgetEnvelopes.(mutlog.ForgetEnvelopes)
	if !ok || fe.Forgets != 1 || fe.WithEnvelope != 0 {
		t.Fatalf("forget_envelopes %+v", rep.Factors.ForgetEnvelopes)
	}
}

func TestConvertRefuses(t *testing.T) {
	many := make([]map[string]any, 0, 1001)
	for i := 0; i < 1001; i++ {
		many = append(many, h("m", "UPDATE", "t", nil))
	}
	for name, in := range map[string][]byte{
		"empty":        nil,
		"not json":     []byte("{nope\n"),
		"no memory id": rowsOf(map[string]any{"event": "ADD"}),
		"only NONE":    rowsOf(h("m", "NONE", "t", nil)),
		"over the cap": rowsOf(many...),
	} {
		if _, _, err := mem0history.Convert(in); err == nil {
			t.Errorf("%s: converted", name)
		} else if strings.Contains(err.Error(), canaryText) {
			t.Errorf("%s: the error quotes the input", name)
		}
	}
}

// FuzzConvert: any bytes either convert into an export the engine accepts, or are refused with a
// message that quotes nothing of the input; never a panic.
func FuzzConvert(f *testing.F) {
	f.Add(rowsOf(h("m1", "ADD", "1", "a"), h("m1", "DELETE", "2", nil)))
	f.Add([]byte(`{"memory_id":"x","event":"UPDATE","created_at":null}`))
	f.Add([]byte("\n\n{}\n"))
	src, err := os.ReadFile("../../criteria/forget-envelope.yaml")
	if err != nil {
		f.Fatal(err)
	}
	ms, err := rules.LoadMutationLog("forget-envelope.yaml", src)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		ex, _, err := mem0history.Convert(in)
		if err != nil {
			return
		}
		body, _ := json.Marshal(ex)
		if len(body) > 262144 {
			return
		}
		if _, ref, err := mutlog.Precheck(ms, body, time.Now()); err != nil || ref != nil {
			t.Fatalf("the converted export is refused: %v %+v", err, ref)
		}
	})
}
