package forget

// workedExample is docs/forget-envelope.md's worked example, verbatim in content.
func workedExample() obj {
	return with(log3("transitional",
		wr(1, kA("pref"), "p-owner", 1),
		fg(2, kA("pref"), "p-owner", env("p-owner")),
		ra(3, sc("tenant", "A", "agent", "7", "session", "s1"), "p-other", "p-other", nil),
		wr(4, k(sc("tenant", "a", "agent", "7", "session", "s1"), " Pref"), "p-other", 2)),
		"principals", owners,
		"snapshot", snap(se(kA("pref"), 1)))
}

// tr is a transitional log with the seed's two principals and a snapshot-free body.
func tr(events ...obj) obj { return with(log3("transitional", events...), "principals", owners) }

// tm is a terminal log with the seed's two principals.
func tm(events ...obj) obj { return with(log3("terminal", events...), "principals", owners) }

// factorEdges exercise the readings behind the seven factors, in the corpus's order.
func factorEdges() []edge {
	return concat(canonicalEdges(), replayEdges(), envelopeEdges(), authorityEdges(), boundaryEdges())
}

// canonicalEdges exercise canonicalization and slot identity (FE-R-12, FE-R-13), after the
// worked example (FE-R-41).
func canonicalEdges() []edge {
	return []edge{
		{"FE-R-41-worked-example", rs("FE-R-41", "FE-R-22", "FE-R-23", "FE-R-24", "FE-R-27", "FE-R-29"), workedExample(), nil},
		{"FE-R-12-trim-and-lower-alias", rs("FE-R-12", "FE-R-24"), tr(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", env("p-owner")),
			wr(3, k(sc("tenant", "\t a\r\n", "agent", "7 ", "session", "S1"), "PREF\n"), "p-owner", 2)), nil},
		{"FE-R-12-no-unicode-folding", rs("FE-R-12", "FE-R-13"), tr(
			wr(1, kA("café"), "p-owner", 1), fg(2, kA("café"), "p-owner", env("p-owner")),
			wr(3, kA("CAFÉ"), "p-owner", 2)), nil},
		{"FE-R-12-nbsp-not-trimmed", rs("FE-R-12", "FE-R-13"), tr(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", env("p-owner")),
			wr(3, kA("\u00a0pref"), "p-owner", 2), wr(4, kA("\vpref"), "p-owner", 2), wr(5, kA("\fpref"), "p-owner", 2)), nil},
		{"FE-R-12-inner-space-kept", rs("FE-R-12", "FE-R-13"), tr(
			wr(1, kA("my pref"), "p-owner", 1), fg(2, kA("my pref"), "p-owner", nil),
			wr(3, kA("my  pref"), "p-owner", 2), wr(4, kA(" MY PREF "), "p-owner", 3)), nil},
		{"FE-R-12-principal-ids-exact", rs("FE-R-12", "FE-R-22"), with(tr(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", env("P-OWNER", " p-owner")),
			wr(3, kA("pref"), "p-owner", 2)), "snapshot", snap(se(kA("pref"), 2))), nil},
		{"FE-R-12-grant-values-canonical", rs("FE-R-12", "FE-R-23"), with(tr(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", env("p-owner")),
			wr(3, kA("pref"), "p-grant", 2)), "principals", table(pr("p-owner"), pr("p-grant", sc("tenant", " a ", "agent", "7")))), nil},
		{"FE-R-13-omitted-is-not-empty", rs("FE-R-13", "FE-R-33"), tr(
			wr(1, k(sc("tenant", "A"), "pref"), "p-owner", 1), fg(2, k(sc("tenant", "A"), "pref"), "p-owner", env("p-owner")),
			wr(3, k(sc("tenant", "A", "agent", ""), "pref"), "p-other", 2)), nil},
		{"FE-R-13-null-member-is-omitted", rs("FE-R-13", "FE-R-4", "FE-R-24"), tr(
			wr(1, k(sc("tenant", "A"), "pref"), "p-owner", 1), fg(2, k(sc("tenant", "A"), "pref"), "p-owner", env("p-owner")),
			wr(3, k(sc("tenant", "A", "agent", nil), "pref"), "p-other", 2)), nil},
		{"FE-R-13-aliased-slots-counted", rs("FE-R-13", "FE-R-33"), tr(
			wr(1, kA("a"), "p-owner", 1), wr(2, kA("A"), "p-owner", 2), wr(3, kA(" a"), "p-owner", 3),
			wr(4, kA("b"), "p-owner", 1), fg(5, kA("b"), "p-owner", nil), ro(6, kA("B"), "p-owner", nil), wr(7, kA("c"), "p-owner", 1)), nil},
	}
}

// replayEdges exercise replay: seq order, the transition table, versions, reinserts and the
// governing forget (FE-R-14 … FE-R-19).
func replayEdges() []edge {
	return []edge{
		{"FE-R-14-replay-by-seq-not-array", rs("FE-R-14", "FE-R-18", "FE-R-29"), with(tr(
			wr(30, kA("pref"), "p-other", 3), fg(20, kA("pref"), "p-owner", env("p-owner")), wr(10, kA("pref"), "p-owner", 1)),
			"snapshot", snap(se(kA("pref"), 3))), nil},
		{"FE-R-14-seq-gaps", rs("FE-R-14", "FE-R-17"), with(tr(
			wr(100, kA("pref"), "p-owner", 1), wr(7, kA("pref"), "p-owner", 9), fg(55, kA("other"), "p-owner", env())),
			"snapshot", snap(se(kA("pref"), 1))), nil},
		{"FE-R-15-terminal-reopen-then-write-not-reinsert", rs("FE-R-15", "FE-R-26"), with(tm(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", env("p-owner")),
			ro(3, kA("pref"), "p-owner", true), wr(4, kA("pref"), "p-other", 2)),
			"snapshot", snap(se(kA("pref"), 2))), nil},
		{"FE-R-15-terminal-reopen-then-no-write-absent", rs("FE-R-15", "FE-R-29"), with(tm(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", env("p-owner")), ro(3, kA("pref"), "p-owner", true)),
			"snapshot", snap(se(kA("pref"), 1))), nil},
		{"FE-R-15-terminal-retired-stays-after-reforget", rs("FE-R-15", "FE-R-16", "FE-R-26"), tm(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", nil), fg(3, kA("pref"), "p-owner", env("p-owner")),
			wr(4, kA("pref"), "p-other", 2)), nil},
		{"FE-R-16-forget-never-written", rs("FE-R-16", "FE-R-21", "FE-R-33"), tr(
			fg(1, kA("ghost"), "p-owner", env("p-owner")), wr(2, kA("ghost"), "p-other", 1)), nil},
		{"FE-R-16-double-forget", rs("FE-R-16", "FE-R-19"), tr(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", env("p-owner")), fg(3, kA("pref"), "p-owner", env("p-owner")),
			wr(4, kA("pref"), "p-owner", 2)), nil},
		{"FE-R-16-transitional-reopens-ineffective", rs("FE-R-16", "FE-R-33"), tr(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", nil), ro(3, kA("pref"), "p-owner", true), ro(4, kA("new"), "p-owner", nil),
			wr(5, kA("pref"), "p-owner", 2)), nil},
		{"FE-R-16-terminal-reopen-of-live-ineffective", rs("FE-R-16", "FE-R-26"), tm(
			wr(1, kA("pref"), "p-owner", 1), ro(2, kA("pref"), "p-owner", nil), ro(3, kA("never"), "p-owner", nil),
			fg(4, kA("pref"), "p-owner", nil), ro(5, kA("pref"), "p-owner", nil), ro(6, kA("pref"), "p-owner", nil)), nil},
		{"FE-R-17-last-write-and-version", rs("FE-R-17", "FE-R-29"), with(tr(
			wr(1, kA("a"), "p-owner", 5), wr(2, kA("a"), "p-owner", 3), wr(3, kA("b"), "p-owner", 1), wr(4, kA("c"), "p-owner", 1),
			fg(5, kA("c"), "p-owner", nil)),
			"snapshot", snap(se(kA("b"), 1))), nil},
		{"FE-R-18-live-write-not-reinsert", rs("FE-R-18"), tr(
			wr(1, kA("pref"), "p-owner", 1), wr(2, kA("pref"), "p-other", 2), fg(3, kA("x"), "p-owner", env("p-owner"))), nil},
		{"FE-R-18-two-reinserts-one-slot", rs("FE-R-18", "FE-R-19"), tr(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", env("p-owner")), wr(3, kA("pref"), "p-other", 2),
			fg(4, kA("pref"), "p-other", env("p-other")), wr(5, kA("pref"), "p-owner", 3)), nil},
		{"FE-R-19-governing-forget-latest-without-envelope", rs("FE-R-19", "FE-R-22"), tr(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", env("p-owner")), fg(3, kA("Pref"), "p-owner", nil),
			wr(4, kA("Pref"), "p-other", 2)), nil},
		{"FE-R-19-governing-forget-latest-with-envelope", rs("FE-R-19", "FE-R-22", "FE-R-24"), tr(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("Pref"), "p-owner", nil), fg(3, kA("pref"), "p-owner", env("p-owner")),
			wr(4, kA("Pref"), "p-other", 2)), nil},
		{"FE-R-19-other-slot-forget-does-not-govern", rs("FE-R-19"), tr(
			wr(1, kA("a"), "p-owner", 1), fg(2, kA("b"), "p-owner", env("p-owner")), wr(3, kA("a"), "p-other", 2), wr(4, kB("b"), "p-other", 1)), nil},
	}
}

// envelopeEdges exercise envelopes, their rate, attribution, grants and aliases
// (FE-R-20 … FE-R-24, FE-R-32).
func envelopeEdges() []edge {
	return []edge{
		{"FE-R-20-empty-envelope-admits-no-one", rs("FE-R-20", "FE-R-22", "FE-R-23"), tr(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", env()), wr(3, kA("pref"), "p-owner", 2)), nil},
		{"FE-R-20-repeated-and-undeclared-entries", rs("FE-R-20", "FE-R-22"), tr(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", env("p-owner", "p-owner", "p-gone")), wr(3, kA("pref"), "p-owner", 2)), nil},
		{"FE-R-21-rate-two-of-three", rs("FE-R-21", "FE-R-32"), tr(
			fg(1, kA("a"), "p-owner", env("p-owner")), fg(2, kA("b"), "p-owner", nil), fg(3, kA("c"), "p-owner", env())), nil},
		{"FE-R-21-rate-one-of-three", rs("FE-R-21", "FE-R-32"), tr(
			fg(3, kA("a"), "p-owner", nil), fg(1, kA("b"), "p-owner", nil), fg(2, kA("c"), "p-owner", env("p-owner"))), nil},
		{"FE-R-21-rate-zero", rs("FE-R-21", "FE-R-32", "FE-R-30"), tr(
			wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", nil), wr(3, kA("a"), "p-other", 2)), nil},
		{"FE-R-32-rate-one-of-eight-half-up", rs("FE-R-32", "FE-R-21"), tr(
			fg(1, kA("a"), nil, env()), fg(2, kA("b"), nil, nil), fg(3, kA("c"), nil, nil), fg(4, kA("d"), nil, nil),
			fg(5, kA("e"), nil, nil), fg(6, kA("f"), nil, nil), fg(7, kA("g"), nil, nil), fg(8, kA("h"), nil, nil)), nil},
		{"FE-R-32-rate-five-of-six", rs("FE-R-32", "FE-R-21"), tr(
			fg(1, kA("a"), nil, env()), fg(2, kA("b"), nil, env()), fg(3, kA("c"), nil, env()), fg(4, kA("d"), nil, env()),
			fg(5, kA("e"), nil, env()), fg(6, kA("f"), nil, nil)), nil},
		{"FE-R-22-unattributed-reinsert", rs("FE-R-22", "FE-R-25"), tr(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", env("p-owner")), wr(3, kA("pref"), nil, 2)), nil},
		{"FE-R-22-inside-not-listed", rs("FE-R-22"), tr(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", env("p-owner", "p-other")), wr(3, kA("pref"), "p-other", 2)), nil},
		{"FE-R-22-no-envelope-reinsert", rs("FE-R-22"), tr(
			wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", nil), wr(3, kA("a"), "p-other", 2),
			wr(4, kA("b"), "p-owner", 1), fg(5, kA("b"), "p-owner", env("p-owner")), wr(6, kA("b"), "p-other", 2)), nil},
		{"FE-R-23-outside-not-silent-grant-misses", rs("FE-R-23", "FE-R-22"), tr(
			wr(1, kB("pref"), "p-owner", 1), fg(2, kB("pref"), "p-owner", env("p-owner")), wr(3, kB("pref"), "p-other", 2)), nil},
		{"FE-R-23-empty-grant-covers-all", rs("FE-R-23"), with(tr(
			wr(1, kB("pref"), "p-owner", 1), fg(2, kB("pref"), "p-owner", env("p-owner")), wr(3, kB("pref"), "p-root", 2)),
			"principals", table(pr("p-owner"), pr("p-root", sc()))), nil},
		{"FE-R-23-no-grants-never-silent", rs("FE-R-23"), with(tr(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", env("p-owner")), wr(3, kA("pref"), "p-bare", 2)),
			"principals", table(pr("p-owner"), obj{"id": "p-bare", "grants": []any{}})), nil},
		{"FE-R-23-grant-needs-present-dimension", rs("FE-R-23", "FE-R-13"), tr(
			wr(1, k(sc("tenant", "A"), "pref"), "p-owner", 1), fg(2, k(sc("tenant", "A"), "pref"), "p-owner", env("p-owner")),
			wr(3, k(sc("tenant", "A"), "pref"), "p-other", 2)), nil},
		{"FE-R-23-grant-null-member-ignored", rs("FE-R-23", "FE-R-4"), with(tr(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", env("p-owner")), wr(3, kA("pref"), "p-x", 2)),
			"principals", table(pr("p-owner"), pr("p-x", sc("tenant", "Z"), sc("tenant", "A", "session", nil)))), nil},
		{"FE-R-23-second-grant-covers", rs("FE-R-23"), with(tr(
			wr(1, kB("pref"), "p-owner", 1), fg(2, kB("pref"), "p-owner", env("p-owner")), wr(3, kB("pref"), "p-x", 2),
			wr(4, kA("q"), "p-owner", 1), fg(5, kA("q"), "p-owner", env("p-owner")), wr(6, kA("q"), "p-x", 2)),
			"principals", table(pr("p-owner"), pr("p-x", sc("tenant", "A"), sc("tenant", "B", "agent", "7", "session", "s2")))), nil},
		{"FE-R-24-same-raw-key-not-alias", rs("FE-R-24"), tr(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("Pref"), "p-owner", nil), wr(3, kA("Pref"), "p-owner", 2)), nil},
		{"FE-R-24-alias-against-governing-forget-only", rs("FE-R-24", "FE-R-19"), tr(
			wr(1, kA("pref"), "p-owner", 1), fg(2, kA("pref"), "p-owner", nil), wr(3, kA("PREF"), "p-owner", 2),
			fg(4, kA("PREF"), "p-owner", nil), wr(5, kA("pref"), "p-owner", 3), fg(6, kA("pref"), "p-owner", nil), wr(7, kA("pref"), "p-owner", 4)), nil},
	}
}

// authorityEdges exercise reopens, reassignments, the snapshot comparison and unscoped keys
// (FE-R-26, FE-R-27, FE-R-29, FE-R-31).
func authorityEdges() []edge {
	return []edge{
		{"FE-R-26-terminal-reopens-checked-and-not", rs("FE-R-26"), tm(
			wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", env("p-owner")), ro(3, kA("a"), "p-owner", true),
			wr(4, kA("b"), "p-owner", 1), fg(5, kA("b"), "p-owner", env("p-owner")), ro(6, kA("b"), "p-other", "true"),
			fg(7, kA("c"), "p-owner", nil), ro(8, kA("C"), "p-other", 1), fg(9, kA("d"), nil, nil), ro(10, kA("d"), nil, nil)), nil},
		{"FE-R-26-retired-writes", rs("FE-R-26", "FE-R-18"), with(tm(
			wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", env("p-owner")), wr(3, kA(" A"), "p-other", 2),
			fg(4, kA("b"), "p-owner", nil), wr(5, kA("b"), "p-owner", 1), fg(6, kA("c"), "p-owner", nil), ro(7, kA("c"), "p-owner", true), wr(8, kA("c"), "p-owner", 1)),
			"snapshot", snap(se(kA("a"), 2), se(kA("b"), 1), se(kA("c"), 1))), nil},
		{"FE-R-27-reassign-checked-and-not", rs("FE-R-27"), tr(
			ra(1, sc("tenant", "A", "agent", "7", "session", "s1"), "p-owner", "p-other", true),
			ra(2, sc("session", "s1"), "p-owner", nil, false),
			ra(3, sc(), nil, "p-owner", "yes"),
			wr(4, kA("pref"), "p-owner", 1)), nil},
		{"FE-R-27-reassign-not-a-slot", rs("FE-R-27", "FE-R-33"), with(tr(
			ra(1, sc("tenant", "A", "agent", "7", "session", "s1"), "p-owner", "p-other", nil)),
			"snapshot", snap()), nil},
		{"FE-R-29-all-mismatch-kinds", rs("FE-R-29"), with(tr(
			wr(1, kA("a"), "p-owner", 1), wr(2, kA("b"), "p-owner", 1), wr(3, kA("c"), "p-owner", 4), wr(4, kA("d"), "p-owner", 1),
			fg(5, kA("d"), "p-owner", nil), wr(6, kA("e"), "p-owner", 1)),
			"snapshot", snap(se(kA("c"), 3), se(kA("A"), 1), se(kA("d"), 1), se(kA(" a "), 2), se(kA("zz"), 0), se(kA("c"), 4))), nil},
		{"FE-R-29-duplicate-of-extra", rs("FE-R-29"), with(tr(
			wr(1, kA("a"), "p-owner", 1)),
			"snapshot", snap(se(kA("x"), 1), se(kA("X"), 1), se(kA("a"), 1))), nil},
		{"FE-R-29-empty-snapshot-all-missing", rs("FE-R-29"), with(tr(
			wr(9, kA("a"), "p-owner", 1), wr(4, kA("b"), "p-owner", 1), wr(2, kA("a"), "p-owner", 1)),
			"snapshot", snap()), nil},
		{"FE-R-29-snapshot-matches", rs("FE-R-29"), with(tr(
			wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", env("p-owner")), wr(3, kA("b"), "p-owner", 7)),
			"snapshot", snap(se(kA("b"), 7))), nil},
		{"FE-R-31-unscoped-keys-audited", rs("FE-R-31", "FE-R-23"), with(tr(
			wr(1, k(sc(), "pref"), "p-owner", 1), fg(2, k(sc(), "pref"), "p-owner", env("p-owner")), wr(3, k(sc(), "PREF"), "p-other", 2)),
			"snapshot", snap(se(k(sc(), "pref"), 2))), nil},
	}
}

// boundaryEdges are the cases added at the boundaries of earlier readings (FE-R-7, FE-R-13,
// FE-R-26, FE-R-33); they stay last so the corpus keeps its order.
func boundaryEdges() []edge {
	return []edge{
		{"FE-R-13-blank-value-is-present-empty", rs("FE-R-13", "FE-R-12"), tr(
			wr(1, k(sc("tenant", "A", "agent", " \t "), "n"), "p-owner", 1), fg(2, k(sc("tenant", "A", "agent", ""), "n"), "p-owner", env("p-owner")),
			wr(3, k(sc("tenant", "A"), "n"), "p-owner", 2), wr(4, k(sc("tenant", "A", "agent", "\r\n"), "n"), "p-other", 3)), nil},
		{"FE-R-7-ids-differ-by-case-accepted", rs("FE-R-7", "FE-R-12", "FE-R-22"), with(tr(
			wr(1, kA("a"), "p", 1), fg(2, kA("a"), "p", env("p")), wr(3, kA("a"), "P", 2)),
			"principals", table(pr("p", sc("tenant", "A")), with(pr("P", sc("tenant", "a")), "zz_note", "ignored"))), nil},
		{"FE-R-26-terminal-reopen-write-forget-write", rs("FE-R-26", "FE-R-15", "FE-R-19"), with(tm(
			wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", env("p-owner")), ro(3, kA("A"), "p-owner", true),
			wr(4, kA("a"), "p-other", 2), fg(5, kA("a"), "p-other", nil), wr(6, kA("a"), "p-other", 3), ro(7, kA("a"), "p-other", nil)),
			"snapshot", snap(se(kA("a"), 3))), nil},
		{"FE-R-33-unattributed-events-all-ops", rs("FE-R-33", "FE-R-25"), tr(
			wr(1, kA("a"), nil, 1), fg(2, kA("a"), nil, nil), ro(3, kA("a"), nil, nil), ra(4, sc(), nil, nil, nil), wr(5, kA("a"), "p-owner", 2)), nil},
		{"FE-R-33-single-dimension", rs("FE-R-33", "FE-R-6"), obj{"format": "mutation-log", "forget_mode": "transitional",
			"scope_dimensions": []any{"user"}, "events": []any{wr(1, k(sc("user", "u1"), "m"), nil, 1), fg(2, k(sc("user", "U1"), "m"), nil, env())}}, nil},
	}
}

// gateEdges exercise every NOT ASSESSABLE reason of every factor (FE-R-30, FE-R-34).
func gateEdges() []edge {
	noForget := tr(wr(1, kA("a"), "p-owner", 1), ro(2, kA("a"), "p-owner", nil))
	return []edge{
		{"FE-R-30-no-forgets-transitional", rs("FE-R-30", "forget_envelopes", "reinserts_after_forget", "alias_reinserts"), noForget, nil},
		{"FE-R-30-no-forgets-terminal", rs("FE-R-30", "reopens"), with(noForget, "forget_mode", "terminal"), nil},
		{"FE-R-30-no-principals-absent", rs("FE-R-30", "reinserts_outside_envelope"), without(tr(
			wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", env("p-owner")), wr(3, kA("a"), "p-other", 2)), "principals"), nil},
		{"FE-R-30-no-envelope-recorded", rs("FE-R-30", "reinserts_outside_envelope"), tr(
			wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", nil), wr(3, kA("a"), "p-other", 2)), nil},
		{"FE-R-30-no-principals-before-no-envelope", rs("FE-R-30", "reinserts_outside_envelope"), with(tr(
			fg(1, kA("a"), "p-owner", nil)), "principals", []any{}), nil},
		{"FE-R-30-terminal-reason-before-no-forgets", rs("FE-R-30", "FE-R-31", "reinserts_after_forget"), tm(wr(1, kA("a"), "p-owner", 1)), nil},
		{"FE-R-30-transitional-reopens", rs("FE-R-30", "reopens"), tr(wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", env("p-owner"))), nil},
		{"FE-R-30-no-reassigns", rs("FE-R-30", "reassignments"), tr(fg(1, kA("a"), "p-owner", env("p-owner"))), nil},
		{"FE-R-30-no-snapshot", rs("FE-R-30", "replay"), tr(wr(1, kA("a"), "p-owner", 1)), nil},
		{"FE-R-30-all-assessable-transitional", rs("FE-R-30"), with(tr(
			wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", env("p-owner")), ra(3, sc("session", "s1"), "p-owner", "p-other", true),
			wr(4, kA("a"), "p-owner", 2)), "snapshot", snap(se(kA("a"), 2))), nil},
		{"FE-R-30-all-assessable-terminal", rs("FE-R-30", "FE-R-26"), with(tm(
			wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", env("p-owner")), ra(3, sc("session", "s1"), "p-owner", "p-other", nil),
			ro(4, kA("a"), "p-owner", nil), wr(5, kA("a"), "p-owner", 2)), "snapshot", snap(se(kA("a"), 2))), nil},
		{"FE-R-34-new-key-store-reinserts-not-observable", rs("FE-R-34"), with(tr(
			wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", env("p-owner")), wr(3, kA("a"), "p-other", 2)),
			"reinsert_identity", "new_key"), nil},
		{"FE-R-34-new-key-before-no-forgets", rs("FE-R-34", "FE-R-30"), with(tr(wr(1, kA("a"), "p-owner", 1)),
			"reinsert_identity", "new_key"), nil},
		{"FE-R-34-other-value-declares-nothing", rs("FE-R-34"), with(tr(
			wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", env("p-owner")), wr(3, kA("a"), "p-other", 2)),
			"reinsert_identity", "New_Key"), nil},
		{"FE-R-34-non-string-never-refused", rs("FE-R-34", "FE-R-1"), with(tr(
			wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", nil)), "reinsert_identity", obj{"new_key": true}), nil},
		{"FE-R-34-terminal-reason-comes-first", rs("FE-R-34", "FE-R-30"), with(tm(
			wr(1, kA("a"), "p-owner", 1), fg(2, kA("a"), "p-owner", env("p-owner")), wr(3, kA("a"), "p-other", 2)),
			"reinsert_identity", "new_key"), nil},
		{"FE-R-4-caller-ignored-by-audit", rs("FE-R-4"), with(tr(wr(1, kA("a"), "p-owner", 1)), "caller", "0xcanary"), nil},
	}
}
