package forget

import (
	"encoding/json"
	"strings"
)

// obj is a JSON object under construction.
type obj = map[string]any

var dims3 = []any{"tenant", "agent", "session"}

// log3 is a valid export skeleton over tenant/agent/session.
func log3(mode string, events ...obj) obj {
	evs := make([]any, len(events))
	for i, e := range events {
		evs[i] = e
	}
	return obj{"format": "mutation-log", "forget_mode": mode, "scope_dimensions": dims3, "events": evs}
}

func with(o obj, kv ...any) obj {
	out := obj{}
	for k, v := range o {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func without(o obj, names ...string) obj {
	out := with(o)
	for _, n := range names {
		delete(out, n)
	}
	return out
}

// sc builds a scope object from name/value pairs.
func sc(kv ...any) obj {
	o := obj{}
	for i := 0; i < len(kv); i += 2 {
		o[kv[i].(string)] = kv[i+1]
	}
	return o
}

func k(scope obj, name any) obj { return obj{"scope": scope, "name": name} }

// kA is the seed's key tenant:A/agent:7/session:s1 with a name.
func kA(name string) obj { return k(sc("tenant", "A", "agent", "7", "session", "s1"), name) }

// concat joins groups of edge cases in order.
func concat(groups ...[]edge) []edge {
	var out []edge
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// kB is a key of the same agent and session in tenant B.
func kB(name string) obj { return k(sc("tenant", "B", "agent", "7", "session", "s1"), name) }

// withOpt returns e with each optional name/value pair of opt whose value is not nil set in it.
func withOpt(e obj, opt ...any) obj {
	for i := 0; i+1 < len(opt); i += 2 {
		if opt[i+1] != nil {
			e[opt[i].(string)] = opt[i+1]
		}
	}
	return e
}

func wr(seq any, key obj, principal any, version any) obj {
	return withOpt(obj{"seq": seq, "op": "write", "key": key, "version": version}, "principal", principal)
}

func fg(seq any, key obj, principal any, envelope any) obj {
	return withOpt(obj{"seq": seq, "op": "forget", "key": key}, "principal", principal, "envelope", envelope)
}

func ro(seq any, key obj, principal any, checked any) obj {
	return withOpt(obj{"seq": seq, "op": "reopen", "key": key}, "principal", principal, "authority_checked", checked)
}

func ra(seq any, session obj, principal any, to any, checked any) obj {
	return withOpt(obj{"seq": seq, "op": "reassign", "session": session},
		"principal", principal, "to", to, "authority_checked", checked)
}

// jsonList returns xs as a JSON array value (never nil: an empty list is []).
func jsonList[T any](xs ...T) []any {
	out := []any{}
	for _, x := range xs {
		out = append(out, x)
	}
	return out
}

func env(ids ...string) []any { return jsonList(ids...) }

func table(ps ...obj) []any { return jsonList(ps...) }

func pr(id any, grants ...obj) obj {
	p := obj{"id": id}
	if len(grants) > 0 {
		p["grants"] = jsonList(grants...)
	}
	return p
}

func snap(entries ...obj) []any { return jsonList(entries...) }

func se(key obj, version any) obj { return obj{"key": key, "version": version} }

// owners is the seed's two principals: the owner of session s1 and an agent-wide one.
var owners = table(
	pr("p-owner", sc("tenant", "A", "agent", "7", "session", "s1")),
	pr("p-other", sc("tenant", "A", "agent", "7")),
)

// valid is a small well-formed transitional log every refusal case breaks one way.
func valid() obj {
	return with(log3("transitional",
		wr(1, kA("pref"), "p-owner", 1),
		fg(2, kA("pref"), "p-owner", env("p-owner")),
		wr(3, kA("pref"), "p-other", 2)),
		"principals", owners,
		"snapshot", snap(se(kA("pref"), 2)))
}

// edge is one hand-built case before its expected outcome is computed.
type edge struct {
	name  string // after "oracle-edge-"
	rules []string
	body  any    // serialized with json.Marshal
	raw   []byte // exact bytes (body_base64) when set
}

func rs(ids ...string) []string { return ids }

// eventsWith returns valid() with its events replaced.
func eventsWith(events ...obj) obj {
	evs := make([]any, len(events))
	for i, e := range events {
		evs[i] = e
	}
	return with(valid(), "events", evs)
}

// rawLog is valid()'s bytes with one textual replacement, for number texts that
// json.Marshal cannot write.
func rawLog(o obj, old, repl string) []byte {
	b, _ := json.Marshal(o)
	return []byte(strings.Replace(string(b), old, repl, 1))
}

// padded returns valid() with an unknown member padding its json.Marshal form to
// exactly n bytes (n large).
func padded(n int) obj {
	b, _ := json.Marshal(with(valid(), "zz_pad", ""))
	return with(valid(), "zz_pad", strings.Repeat("x", n-len(b)))
}

func manyEvents(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = ra(i+1, sc(), nil, nil, true)
	}
	return out
}

func manySnapshot(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = se(k(sc(), "p"), i%3)
	}
	return out
}

func edgeCases() ([]Case, error) {
	var out []Case
	for _, e := range concat(refusalEdges(), factorEdges(), gateEdges()) {
		var c Case
		var err error
		name := "oracle-edge-" + e.name
		if e.raw != nil {
			c, err = newRawCase(name, ProvenanceEdge, e.rules, e.raw)
		} else {
			c, err = newCase(name, ProvenanceEdge, e.rules, e.body)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// refusalEdges exercise every refusal rule and its boundaries, in the corpus's order.
func refusalEdges() []edge {
	v := valid()
	return concat(syntaxEdges(v), headerEdges(v), eventEdges(v), keyEdges(v), envelopeSnapshotEdges(v))
}

// syntaxEdges exercise the body cap and the strict JSON reading (FE-R-2, FE-R-3).
func syntaxEdges(v obj) []edge {
	deep := strings.Repeat("[", 63) + strings.Repeat("]", 63)
	tooDeep := strings.Repeat("[", 64) + strings.Repeat("]", 64)
	vb, _ := json.Marshal(v)
	vs := string(vb)
	return []edge{
		{"FE-R-2-body-over-cap", rs("FE-R-2", "body_bytes_cap"), padded(BodyBytesCap + 1), nil},
		{"FE-R-2-body-exactly-at-cap-accepted", rs("FE-R-2"), padded(BodyBytesCap), nil},
		{"FE-R-3-not-json", rs("FE-R-3", "export_required"), nil, []byte(`{"format": "mutation-log",`)},
		{"FE-R-3-byte-order-mark", rs("FE-R-3", "export_required"), nil, append([]byte{0xEF, 0xBB, 0xBF}, vb...)},
		{"FE-R-3-trailing-data", rs("FE-R-3", "export_required"), nil, []byte(vs + " {}")},
		{"FE-R-3-trailing-whitespace-accepted", rs("FE-R-3"), nil, []byte(" \n\t" + vs + "\r\n ")},
		{"FE-R-3-duplicate-member-top", rs("FE-R-3", "export_required"), nil, []byte(`{"format":"mutation-log",` + vs[1:])},
		{"FE-R-3-duplicate-member-nested-by-escape", rs("FE-R-3", "export_required"), nil,
			[]byte(strings.Replace(vs, `"name":"pref"`, `"name":"pref","n\u0061me":"pref"`, 1))},
		{"FE-R-3-lone-high-surrogate", rs("FE-R-3", "export_required"), nil, []byte(strings.Replace(vs, `"name":"pref"`, `"name":"\ud800x"`, 1))},
		{"FE-R-3-lone-low-surrogate", rs("FE-R-3", "export_required"), nil, []byte(strings.Replace(vs, `"name":"pref"`, `"name":"\udc00"`, 1))},
		{"FE-R-3-surrogate-pair-accepted", rs("FE-R-3", "FE-R-13"), nil, []byte(strings.Replace(vs, `"name":"pref"`, `"name":"\ud83d\ude00"`, 1))},
		{"FE-R-3-invalid-utf8", rs("FE-R-3", "export_required"), nil, []byte(strings.Replace(vs, `"pref"`, "\"pr\xffef\"", 1))},
		{"FE-R-3-depth-64-accepted", rs("FE-R-3"), nil, []byte(`{"zz":` + deep + `,` + vs[1:])},
		{"FE-R-3-depth-65", rs("FE-R-3", "export_required"), nil, []byte(`{"zz":` + tooDeep + `,` + vs[1:])},
		{"FE-R-3-top-level-array", rs("FE-R-3", "export_required"), []any{v}, nil},
		{"FE-R-3-top-level-null", rs("FE-R-3", "export_required"), nil, []byte(`null`)},
	}
}

// headerEdges exercise the format, the forget mode, the scope dimensions and the principal
// table (FE-R-5 … FE-R-7).
func headerEdges(v obj) []edge {
	return []edge{
		{"FE-R-5-format-absent", rs("FE-R-5", "format_invalid"), without(v, "format"), nil},
		{"FE-R-5-format-null", rs("FE-R-5", "FE-R-4", "format_invalid"), with(v, "format", nil), nil},
		{"FE-R-5-format-case", rs("FE-R-5", "format_invalid"), with(v, "format", "Mutation-log"), nil},
		{"FE-R-5-format-before-mode", rs("FE-R-5", "FE-R-1", "format_invalid"), with(v, "format", 1, "forget_mode", "x"), nil},
		{"FE-R-5-mode-absent", rs("FE-R-5", "forget_mode_invalid"), without(v, "forget_mode"), nil},
		{"FE-R-5-mode-case", rs("FE-R-5", "forget_mode_invalid"), with(v, "forget_mode", "Terminal"), nil},
		{"FE-R-5-mode-tombstone", rs("FE-R-5", "forget_mode_invalid"), with(v, "forget_mode", "tombstone"), nil},
		{"FE-R-6-dims-absent", rs("FE-R-6", "scope_dimensions_invalid"), without(v, "scope_dimensions"), nil},
		{"FE-R-6-dims-not-array", rs("FE-R-6", "scope_dimensions_invalid"), with(v, "scope_dimensions", "tenant"), nil},
		{"FE-R-6-dims-empty", rs("FE-R-6", "scope_dimensions_invalid"), with(v, "scope_dimensions", []any{}), nil},
		{"FE-R-6-dims-nine", rs("FE-R-6", "scope_dimensions_invalid"), with(v, "scope_dimensions",
			[]any{"tenant", "agent", "session", "d4", "d5", "d6", "d7", "d8", "d9"}), nil},
		{"FE-R-6-dims-eight-accepted", rs("FE-R-6"), with(v, "scope_dimensions",
			[]any{"tenant", "agent", "session", "d4", "d5", "d6", "d7", "d8"}), nil},
		{"FE-R-6-dims-empty-string", rs("FE-R-6", "scope_dimensions_invalid"), with(v, "scope_dimensions", []any{"tenant", "", "agent", "session"}), nil},
		{"FE-R-6-dims-null-entry", rs("FE-R-6", "FE-R-4", "scope_dimensions_invalid"), with(v, "scope_dimensions", []any{"tenant", nil, "agent", "session"}), nil},
		{"FE-R-6-dims-repeated", rs("FE-R-6", "scope_dimensions_invalid"), with(v, "scope_dimensions", []any{"tenant", "agent", "session", "agent"}), nil},
		{"FE-R-6-dims-differ-by-case-accepted", rs("FE-R-6", "FE-R-12"), with(v, "scope_dimensions", []any{"tenant", "agent", "session", "Tenant"}), nil},
		{"FE-R-7-principals-not-array", rs("FE-R-7", "principals_invalid"), with(v, "principals", obj{"id": "p-owner"}), nil},
		{"FE-R-7-principal-null-entry", rs("FE-R-7", "FE-R-4", "principals_invalid"), with(v, "principals", []any{pr("p-owner"), nil}), nil},
		{"FE-R-7-principal-id-absent", rs("FE-R-7", "principals_invalid"), with(v, "principals", []any{pr("p-owner"), obj{"grants": []any{}}}), nil},
		{"FE-R-7-principal-id-empty", rs("FE-R-7", "principals_invalid"), with(v, "principals", []any{pr("")}), nil},
		{"FE-R-7-principal-id-number", rs("FE-R-7", "principals_invalid"), with(v, "principals", []any{pr("p-owner"), pr("p-other"), pr(7)}), nil},
		{"FE-R-7-principal-id-repeated", rs("FE-R-7", "principals_invalid"), with(v, "principals", []any{pr("p-owner"), pr("p-other"), pr("p-owner")}), nil},
		{"FE-R-7-grants-not-array", rs("FE-R-7", "principals_invalid"), with(v, "principals", []any{pr("p-owner"), obj{"id": "p-other", "grants": sc("tenant", "A")}}), nil},
		{"FE-R-7-grant-not-object", rs("FE-R-7", "principals_invalid"), with(v, "principals", []any{obj{"id": "p-owner", "grants": []any{"tenant"}}}), nil},
		{"FE-R-7-grant-null-entry", rs("FE-R-7", "FE-R-4", "principals_invalid"), with(v, "principals", []any{obj{"id": "p-owner", "grants": []any{nil}}}), nil},
		{"FE-R-7-grant-undeclared-dimension-null", rs("FE-R-7", "principals_invalid"), with(v, "principals", []any{pr("p-owner", sc("region", nil))}), nil},
		{"FE-R-7-grant-value-number", rs("FE-R-7", "principals_invalid"), with(v, "principals", []any{pr("p-owner"), pr("p-other", sc("tenant", 1))}), nil},
		{"FE-R-7-grants-null-is-none", rs("FE-R-7", "FE-R-4", "FE-R-23"), with(v, "principals", []any{pr("p-owner"), obj{"id": "p-other", "grants": nil}}), nil},
		{"FE-R-7-principals-empty-declares-none", rs("FE-R-7", "FE-R-30"), with(v, "principals", []any{}), nil},
	}
}

// eventEdges exercise the events array, seqs, versions and ops (FE-R-8 … FE-R-10).
func eventEdges(v obj) []edge {
	return []edge{
		{"FE-R-8-events-absent", rs("FE-R-8", "events_required"), without(v, "events"), nil},
		{"FE-R-8-events-object", rs("FE-R-8", "events_required"), with(v, "events", obj{}), nil},
		{"FE-R-8-events-empty", rs("FE-R-8", "events_empty"), with(v, "events", []any{}), nil},
		{"FE-R-8-events-over-cap", rs("FE-R-8", "event_count_cap"), with(v, "events", manyEvents(EventsCap+1), "principals", nil), nil},
		{"FE-R-8-events-at-cap-accepted", rs("FE-R-8", "FE-R-27"), with(v, "events", manyEvents(EventsCap), "principals", nil), nil},
		{"FE-R-8-cap-before-item-rules", rs("FE-R-8", "FE-R-1", "event_count_cap"), with(v, "events", append(manyEvents(EventsCap+1), nil), "principals", nil), nil},
		{"FE-R-8-event-null", rs("FE-R-8", "FE-R-4", "event_not_object"), with(v, "events", []any{wr(1, kA("pref"), nil, 1), nil}), nil},
		{"FE-R-8-event-array", rs("FE-R-8", "event_not_object"), with(v, "events", []any{wr(1, kA("pref"), nil, 1), wr(2, kA("x"), nil, 1), []any{}}), nil},
		{"FE-R-9-seq-absent", rs("FE-R-9", "event_seq_invalid"), eventsWith(wr(1, kA("pref"), nil, 1), without(wr(2, kA("x"), nil, 1), "seq")), nil},
		{"FE-R-9-seq-zero", rs("FE-R-9", "event_seq_invalid"), eventsWith(wr(0, kA("pref"), nil, 1)), nil},
		{"FE-R-9-seq-string", rs("FE-R-9", "event_seq_invalid"), eventsWith(wr("3", kA("pref"), nil, 1)), nil},
		{"FE-R-9-seq-negative-zero", rs("FE-R-9", "event_seq_invalid"), nil, rawLog(eventsWith(wr(777, kA("pref"), nil, 1)), "777", "-0")},
		{"FE-R-9-seq-fraction", rs("FE-R-9", "event_seq_invalid"), nil, rawLog(eventsWith(wr(777, kA("pref"), nil, 1)), "777", "1.0")},
		{"FE-R-9-seq-exponent", rs("FE-R-9", "event_seq_invalid"), nil, rawLog(eventsWith(wr(777, kA("pref"), nil, 1)), "777", "1e2")},
		{"FE-R-9-seq-above-max", rs("FE-R-9", "event_seq_invalid"), nil, rawLog(eventsWith(wr(777, kA("pref"), nil, 1)), "777", "9007199254740992")},
		{"FE-R-9-seq-huge", rs("FE-R-9", "event_seq_invalid"), nil, rawLog(eventsWith(wr(777, kA("pref"), nil, 1)), "777", "123456789012345678901234567890")},
		{"FE-R-9-seq-max-accepted", rs("FE-R-9", "FE-R-14"), nil, rawLog(eventsWith(wr(1, kA("pref"), nil, 1), fg(777, kA("pref"), nil, nil)), "777", "9007199254740991")},
		{"FE-R-9-seq-boolean", rs("FE-R-9", "event_seq_invalid"), eventsWith(wr(1, kA("a"), nil, 1), wr(true, kA("b"), nil, 1)), nil},
		{"FE-R-25-reopen-principal-not-in-table", rs("FE-R-25", "event_principal_invalid"), eventsWith(wr(1, kA("a"), "p-owner", 1), ro(2, kA("a"), "p-third", true)), nil},
		{"FE-R-9-seq-duplicate", rs("FE-R-9", "event_seq_duplicate"), eventsWith(wr(5, kA("a"), nil, 1), wr(3, kA("b"), nil, 1), wr(4, kA("c"), nil, 1), wr(3, kA("d"), nil, 1), wr(5, kA("e"), nil, 1)), nil},
		{"FE-R-9-seq-invalid-scans-before-duplicate", rs("FE-R-9", "FE-R-1", "event_seq_invalid"), eventsWith(wr(1, kA("a"), nil, 1), wr(1, kA("b"), nil, 1), wr(-4, kA("c"), nil, 1)), nil},
		{"FE-R-9-version-absent", rs("FE-R-9", "event_version_invalid"), eventsWith(wr(1, kA("a"), nil, 1), without(wr(2, kA("b"), nil, 1), "version")), nil},
		{"FE-R-9-version-negative", rs("FE-R-9", "event_version_invalid"), eventsWith(wr(1, kA("a"), nil, -1)), nil},
		{"FE-R-9-version-fraction", rs("FE-R-9", "event_version_invalid"), nil, rawLog(eventsWith(wr(1, kA("a"), nil, 777)), "777", "1.5")},
		{"FE-R-9-version-exponent", rs("FE-R-9", "event_version_invalid"), nil, rawLog(eventsWith(wr(1, kA("a"), nil, 777)), "777", "7E0")},
		{"FE-R-9-version-negative-zero-accepted", rs("FE-R-9", "FE-R-17", "FE-R-29"), nil, rawLog(with(eventsWith(wr(1, kA("a"), nil, 777)), "snapshot", snap(se(kA("a"), 0))), "777", "-0")},
		{"FE-R-9-version-zero-accepted", rs("FE-R-9", "FE-R-17"), eventsWith(wr(1, kA("a"), nil, 0)), nil},
		{"FE-R-9-version-on-forget-ignored", rs("FE-R-9", "FE-R-10"), eventsWith(wr(1, kA("a"), nil, 1), with(fg(2, kA("a"), nil, nil), "version", "x")), nil},
		{"FE-R-10-op-absent", rs("FE-R-10", "event_op_invalid"), eventsWith(wr(1, kA("a"), nil, 1), without(wr(2, kA("b"), nil, 1), "op")), nil},
		{"FE-R-10-op-delete", rs("FE-R-10", "event_op_invalid"), eventsWith(with(wr(1, kA("a"), nil, 1), "op", "delete")), nil},
		{"FE-R-10-op-case", rs("FE-R-10", "event_op_invalid"), eventsWith(with(wr(1, kA("a"), nil, 1), "op", "Write")), nil},
		{"FE-R-1-op-at-9-before-key-at-0", rs("FE-R-1", "event_op_invalid"), eventsWith(
			without(wr(1, kA("a"), nil, 1), "key"), wr(2, kA("a"), nil, 1), wr(3, kA("a"), nil, 1), wr(4, kA("a"), nil, 1),
			wr(5, kA("a"), nil, 1), wr(6, kA("a"), nil, 1), wr(7, kA("a"), nil, 1), wr(8, kA("a"), nil, 1), wr(9, kA("a"), nil, 1),
			with(wr(10, kA("a"), nil, 1), "op", "erase")), nil},
		{"FE-R-10-unread-members-ignored", rs("FE-R-10", "FE-R-4"), eventsWith(
			with(wr(1, kA("a"), nil, 1), "envelope", 5, "authority_checked", "x", "to", 9, "session", 3),
			with(fg(2, kA("a"), nil, nil), "to", "", "session", []any{}),
			with(ra(3, sc("session", "s1"), nil, nil, nil), "key", 12, "version", "v", "envelope", "e"),
			with(ro(4, kA("a"), nil, nil), "envelope", 1, "version", -3, "to", ""),
			with(wr(5, kA("b"), nil, 1), "zz_unknown", obj{"deep": []any{1, "canary"}})), nil},
	}
}

// keyEdges exercise keys, sessions and event principals (FE-R-11, FE-R-25).
func keyEdges(v obj) []edge {
	return []edge{
		{"FE-R-11-key-absent", rs("FE-R-11", "event_key_invalid"), eventsWith(wr(1, kA("a"), nil, 1), without(fg(2, kA("a"), nil, nil), "key")), nil},
		{"FE-R-11-key-string", rs("FE-R-11", "event_key_invalid"), eventsWith(with(ro(1, kA("a"), nil, nil), "key", "tenant:A/pref")), nil},
		{"FE-R-11-key-null", rs("FE-R-11", "FE-R-4", "event_key_invalid"), eventsWith(with(wr(1, kA("a"), nil, 1), "key", nil)), nil},
		{"FE-R-11-name-absent", rs("FE-R-11", "event_key_invalid"), eventsWith(with(wr(1, kA("a"), nil, 1), "key", obj{"scope": sc()})), nil},
		{"FE-R-11-name-number", rs("FE-R-11", "event_key_invalid"), eventsWith(wr(1, k(sc(), 3), nil, 1)), nil},
		{"FE-R-11-name-empty-accepted", rs("FE-R-11", "FE-R-13"), eventsWith(wr(1, k(sc(), ""), nil, 1), fg(2, k(sc(), " "), nil, env()), wr(3, k(sc(), ""), nil, 2)), nil},
		{"FE-R-11-scope-absent", rs("FE-R-11", "event_key_invalid"), eventsWith(wr(1, kA("a"), nil, 1), with(wr(2, kA("a"), nil, 1), "key", obj{"name": "a"})), nil},
		{"FE-R-11-scope-array", rs("FE-R-11", "event_key_invalid"), eventsWith(with(wr(1, kA("a"), nil, 1), "key", obj{"scope": []any{}, "name": "a"})), nil},
		{"FE-R-11-scope-null", rs("FE-R-11", "FE-R-4", "event_key_invalid"), eventsWith(wr(1, k(nil, "a"), nil, 1)), nil},
		{"FE-R-11-scope-undeclared-dimension", rs("FE-R-11", "event_key_invalid"), eventsWith(wr(1, k(sc("tenant", "A", "region", "eu"), "a"), nil, 1)), nil},
		{"FE-R-11-scope-undeclared-dimension-null", rs("FE-R-11", "event_key_invalid"), eventsWith(wr(1, k(sc("region", nil), "a"), nil, 1)), nil},
		{"FE-R-11-scope-dimension-case", rs("FE-R-11", "FE-R-12", "event_key_invalid"), eventsWith(wr(1, k(sc("Tenant", "A"), "a"), nil, 1)), nil},
		{"FE-R-11-scope-value-number", rs("FE-R-11", "event_key_invalid"), eventsWith(wr(1, k(sc("tenant", 1), "a"), nil, 1)), nil},
		{"FE-R-11-session-absent", rs("FE-R-11", "event_key_invalid"), eventsWith(wr(1, kA("a"), nil, 1), with(ra(2, nil, nil, nil, nil), "key", kA("a"))), nil},
		{"FE-R-11-session-bad-member", rs("FE-R-11", "event_key_invalid"), eventsWith(ra(1, sc("session", "s1", "user", "u"), nil, nil, nil)), nil},
		{"FE-R-11-session-empty-accepted", rs("FE-R-11", "FE-R-27"), eventsWith(ra(1, sc(), nil, nil, nil)), nil},
		{"FE-R-25-principal-empty", rs("FE-R-25", "event_principal_invalid"), eventsWith(wr(1, kA("a"), "", 1)), nil},
		{"FE-R-25-principal-number", rs("FE-R-25", "event_principal_invalid"), eventsWith(wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), 4, nil)), nil},
		{"FE-R-25-principal-not-in-table", rs("FE-R-25", "event_principal_invalid"), eventsWith(wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "P-owner", nil)), nil},
		{"FE-R-25-principal-free-without-table", rs("FE-R-25", "FE-R-30"), with(eventsWith(wr(1, kA("a"), "anyone", 1), fg(2, kA("a"), "p-x", env("p-y"))), "principals", nil), nil},
		{"FE-R-25-to-empty", rs("FE-R-25", "event_principal_invalid"), eventsWith(ra(1, sc("session", "s1"), "p-owner", "", nil)), nil},
		{"FE-R-25-to-not-in-table", rs("FE-R-25", "event_principal_invalid"), eventsWith(ra(1, sc("session", "s1"), "p-owner", "p-third", nil)), nil},
		{"FE-R-25-to-on-write-ignored", rs("FE-R-25", "FE-R-10"), eventsWith(with(wr(1, kA("a"), "p-owner", 1), "to", "p-nobody")), nil},
		{"FE-R-25-key-before-principal", rs("FE-R-1", "FE-R-25", "event_key_invalid"), eventsWith(wr(1, kA("a"), "", 1), without(wr(2, kA("a"), nil, 1), "key")), nil},
	}
}

// envelopeSnapshotEdges exercise recorded envelopes and the snapshot (FE-R-20, FE-R-28).
func envelopeSnapshotEdges(v obj) []edge {
	return []edge{
		{"FE-R-20-envelope-string", rs("FE-R-20", "envelope_invalid"), eventsWith(wr(1, kA("a"), nil, 1), fg(2, kA("a"), nil, "p-owner")), nil},
		{"FE-R-20-envelope-number-entry", rs("FE-R-20", "envelope_invalid"), eventsWith(fg(1, kA("a"), nil, []any{"p-owner", 2})), nil},
		{"FE-R-20-envelope-null-entry", rs("FE-R-20", "FE-R-4", "envelope_invalid"), eventsWith(fg(1, kA("a"), nil, []any{nil})), nil},
		{"FE-R-20-envelope-null-not-recorded", rs("FE-R-20", "FE-R-4", "FE-R-21"), eventsWith(wr(1, kA("a"), nil, 1), with(fg(2, kA("a"), nil, nil), "envelope", nil)), nil},
		{"FE-R-20-version-before-envelope", rs("FE-R-1", "event_version_invalid"), eventsWith(fg(1, kA("a"), nil, "bad"), wr(2, kA("a"), nil, "bad")), nil},
		{"FE-R-28-snapshot-not-array", rs("FE-R-28", "snapshot_invalid"), with(v, "snapshot", obj{}), nil},
		{"FE-R-28-snapshot-null-entry", rs("FE-R-28", "FE-R-4", "snapshot_invalid"), with(v, "snapshot", []any{se(kA("pref"), 2), nil}), nil},
		{"FE-R-28-snapshot-key-bad", rs("FE-R-28", "snapshot_invalid"), with(v, "snapshot", []any{se(kA("pref"), 2), se(k(sc("zone", "x"), "pref"), 2)}), nil},
		{"FE-R-28-snapshot-version-absent", rs("FE-R-28", "snapshot_invalid"), with(v, "snapshot", []any{obj{"key": kA("pref")}}), nil},
		{"FE-R-28-snapshot-version-fraction", rs("FE-R-28", "snapshot_invalid"), nil, rawLog(with(v, "snapshot", snap(se(kA("pref"), 777))), "777", "2.0")},
		{"FE-R-28-snapshot-over-cap", rs("FE-R-28", "snapshot_count_cap"), with(v, "snapshot", manySnapshot(SnapshotCap+1)), nil},
		{"FE-R-28-snapshot-invalid-before-cap", rs("FE-R-28", "FE-R-1", "snapshot_invalid"), with(v, "snapshot", append(manySnapshot(SnapshotCap+1), "x")), nil},
		{"FE-R-28-snapshot-at-cap-accepted", rs("FE-R-28", "FE-R-29"), with(v, "snapshot", manySnapshot(SnapshotCap)), nil},
		{"FE-R-28-snapshot-null-is-absent", rs("FE-R-28", "FE-R-4", "FE-R-30"), with(v, "snapshot", nil), nil},
		{"FE-R-28-snapshot-empty-submitted", rs("FE-R-28", "FE-R-29"), with(v, "snapshot", []any{}), nil},
	}
}
