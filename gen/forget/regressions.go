package forget

// ProvenanceRegression labels a case that pins down a corrected reading (docs
// "Corpus"; the README's "Revising the criteria").
const ProvenanceRegression = "regression"

// regressionEdges are the logs that showed revision 1.0.0's readings hiding or
// misstating a finding (issue 25), each with the outcome its 1.0.1 reading gives.
// Their shapes are those of the logs the issue counts: multi-tenant stores with
// the seed's owner and agent-wide principals.
func regressionEdges() []edge {
	// A session-scoped owner forgets its key; an agent-wide peer writes it back.
	escalation := func(mode string) obj {
		return log3(mode,
			wr(1, kA("pref"), "p-owner", 1), wr(2, kA("diet"), "p-owner", 1),
			fg(3, kA("pref"), "p-owner", env("p-owner")), fg(4, kA("diet"), "p-owner", env("p-owner", "p-other")),
			wr(5, kA("pref"), "p-other", 2), wr(6, kA("Diet "), "p-other", 2))
	}
	return []edge{
		// Item 1 (FE-R-35): no principal table; outside > 0 was hidden as NOT ASSESSABLE.
		{"FE-R-35-no-table-outside-counted", rs("FE-R-35", "FE-R-22", "FE-R-23", "reinserts_outside_envelope"),
			escalation("transitional"), nil},
		{"FE-R-35-no-table-empty-principals-outside-counted", rs("FE-R-35", "FE-R-7", "FE-R-20", "reinserts_outside_envelope"),
			with(log3("transitional",
				wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", env()), wr(3, kA("a"), "p-owner", 2),
				wr(4, kB("b"), "p-other", 1), fg(5, kB("b"), "p-other", env("p-other")), wr(6, kB("b"), "p-other", 2)),
				"principals", []any{}), nil},
		{"FE-R-35-no-table-no-reinsert-assessed-zero", rs("FE-R-35", "FE-R-37", "reinserts_outside_envelope"),
			log3("transitional", wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", env("p-owner"))), nil},
		// Item 2 (FE-R-36): terminal mode wrote back into retired keys with no reopen; the
		// writes are retired-key writes and are judged against their envelope.
		{"FE-R-36-terminal-retired-writes-judged", rs("FE-R-36", "FE-R-18", "FE-R-26", "reinserts_outside_envelope"),
			with(escalation("terminal"), "principals", owners), nil},
		{"FE-R-36-terminal-no-table-retired-write-outside", rs("FE-R-36", "FE-R-35", "reinserts_outside_envelope"),
			with(log3("terminal",
				wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", env("p-owner")), wr(3, kA("pref"), "p-other", 2),
				wr(4, kA("memo"), "p-owner", 1), fg(5, kA("memo"), "p-owner", env("p-owner")), ro(6, kA("memo"), "p-owner", true),
				wr(7, kA("memo"), "p-other", 2)),
				"snapshot", snap(se(kA("pref"), 2), se(kA("memo"), 2))), nil},
		{"FE-R-36-terminal-every-forget-without-envelope", rs("FE-R-36", "FE-R-30", "reinserts_outside_envelope"),
			with(log3("terminal", wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", nil), wr(3, kA("a"), "p-other", 2)),
				"principals", owners), nil},
		// Item 3 (FE-R-37): reinserts exist and none could be judged; 1.0.0 printed 0.
		{"FE-R-37-none-judged-no-envelope", rs("FE-R-37", "FE-R-22", "reinserts_outside_envelope"),
			with(log3("transitional",
				wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", nil), fg(3, kA("b"), "p-owner", env("p-owner")),
				wr(4, kA("a"), "p-other", 2)), "principals", owners), nil},
		{"FE-R-37-none-judged-unattributed", rs("FE-R-37", "FE-R-22", "FE-R-25", "reinserts_outside_envelope"),
			with(log3("transitional",
				wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", env("p-owner")), wr(3, kA("a"), nil, 2),
				wr(4, kA("b"), "p-owner", 1), fg(5, kA("b"), "p-owner", nil), wr(6, kA("b"), "p-other", 2)), "principals", owners), nil},
		{"FE-R-37-none-judged-no-table", rs("FE-R-37", "FE-R-35", "reinserts_outside_envelope"),
			log3("transitional",
				wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", env("p-owner")), wr(3, kA("a"), nil, 2)), nil},
		{"FE-R-37-one-judged-zero-is-assessed", rs("FE-R-37", "FE-R-22", "reinserts_outside_envelope"),
			with(log3("transitional",
				wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", env("p-owner")), wr(3, kA("a"), "p-owner", 2),
				fg(4, kA("b"), "p-owner", nil), wr(5, kA("b"), "p-other", 1)), "principals", owners), nil},
		// Item 4 (FE-R-38): a tombstone-only store whose log is the sole truth: the rules do
		// not apply, whatever its mode.
		{"FE-R-38-tombstone-only-does-not-apply", rs("FE-R-38", "FE-R-31"),
			with(escalation("terminal"), "principals", owners, "forget_semantics", "tombstone_only",
				"snapshot", snap(se(kA("pref"), 2))), nil},
		{"FE-R-38-tombstone-only-transitional-does-not-apply", rs("FE-R-38"),
			with(escalation("transitional"), "forget_semantics", "tombstone_only", "reinsert_identity", "new_key"), nil},
		{"FE-R-38-other-values-declare-nothing", rs("FE-R-38", "FE-R-4"),
			with(escalation("transitional"), "principals", owners, "forget_semantics", "Tombstone_only"), nil},
		{"FE-R-38-non-string-never-refused", rs("FE-R-38", "FE-R-1"),
			with(escalation("terminal"), "forget_semantics", obj{"tombstone_only": true}), nil},
		// Item 5 (FE-R-39): the new-key case is trivially satisfied, in the seed's words.
		{"FE-R-39-new-key-trivially-satisfied", rs("FE-R-39", "FE-R-34"),
			with(escalation("transitional"), "principals", owners, "reinsert_identity", "new_key"), nil},
		{"FE-R-39-terminal-new-key", rs("FE-R-39", "FE-R-36", "FE-R-34"),
			with(escalation("terminal"), "principals", owners, "reinsert_identity", "new_key"), nil},
	}
}

func regressionCases() ([]Case, error) {
	var out []Case
	for _, e := range regressionEdges() {
		c, err := newCase("oracle-regression-"+e.name, ProvenanceRegression, e.rules, e.body)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
