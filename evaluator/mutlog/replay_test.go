package mutlog

import (
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/scopehygiene/scope-hygiene/gen/forget"
	"github.com/scopehygiene/scope-hygiene/rules"
)

// TestCanonicalSteps holds the steps to their plain definitions (FE-R-12): canonical, which
// returns an already canonical value as the very same string, and keyOf's one-pass writer
// (canonSteps.appendLP), for the steps in either order, repeated or alone, with no allocation.
func TestCanonicalSteps(t *testing.T) {
	steps := []string{"trim_ascii_space", "ascii_lower"}
	// ascii_lower leaves non-ASCII letters alone, unlike strings.ToLower.
	plain := func(s string) string { return asciiOnlyLower(strings.Trim(s, " \t\n\r")) }
	values := []string{"", " ", "a", "A", " \tTenant-A\r\n", "tenant-a", "ÄBC", "x\u00a0Y ", "\v a \v", "MiXeD case", strings.Repeat("Ab ", 40)}
	for _, s := range values {
		if got, want := canonical(steps, s), plain(s); got != want {
			t.Errorf("canonical(%q) = %q, want %q", s, got, want)
		}
	}
	s := "tenant-a"
	if got := canonical(steps, s); unsafe.StringData(got) != unsafe.StringData(s) {
		t.Error("a canonical value was copied")
	}
	var b []byte
	for _, st := range [][]string{steps, {"ascii_lower", "trim_ascii_space"}, {"ascii_lower"}, {"trim_ascii_space"}, nil,
		{"ascii_lower", "trim_ascii_space", "ascii_lower"}} {
		for _, s := range values {
			want := appendLP([]byte("x"), canonical(st, s))
			var at int
			var same bool
			b, at, same = stepsOf(st).appendLP(append(b[:0], 'x'), s)
			if string(b) != string(want) || string(b[at:]) != canonical(st, s) || same != (canonical(st, s) == s) {
				t.Errorf("steps %q, %q: wrote %q at %d (same %v), want %q", st, s, b, at, same, want)
			}
		}
	}
	if n := testing.AllocsPerRun(10, func() { b, _, _ = stepsOf(steps).appendLP(b[:0], " TENANT-A ") }); n != 0 {
		t.Errorf("appendLP allocates %v times", n)
	}
}

func asciiOnlyLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// TestIntegerText holds the hand-written reader to the FE-R-9 pattern it replaced.
func TestIntegerText(t *testing.T) {
	re := regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
	for _, s := range []string{"", "-", "0", "-0", "00", "01", "1", "10", "-10", "1.0", "1e3", "-1e3", "9007199254740991", "+1", "1-", "--1", "0x1"} {
		if got, want := integerText(s), re.MatchString(s); got != want {
			t.Errorf("integerText(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestIdentitiesOutliveTheirScratch: the identity scratch is reused by the next log, so a log's
// identities must not be in it. A log is read, many others (max-size ones included) are read
// through the same pool, and its identities must be unchanged.
func TestIdentitiesOutliveTheirScratch(t *testing.T) {
	src, err := os.ReadFile("../../criteria/forget-envelope.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := rules.LoadMutationLog("forget-envelope.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(l *log) string {
		var b strings.Builder
		for _, s := range l.slots {
			b.WriteString(s + "|")
		}
		for _, d := range l.scopes {
			b.WriteString(d.val + "|")
		}
		for _, e := range l.events {
			b.WriteString(e.raw + "|")
		}
		return b.String()
	}
	first, ref := read(ms, forget.MaxSizeLog(forget.ModeTransitional), false)
	if ref != nil {
		t.Fatal(ref)
	}
	want := ids(first)
	for i := 0; i < 40; i++ {
		body, err := forget.RandomLog(11, i)
		if err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			body = forget.MaxSizeLog(forget.MaxSizeModes[i/10%len(forget.MaxSizeModes)])
		}
		read(ms, body, false)
	}
	if ids(first) != want {
		t.Fatal("a log's identities changed after later logs reused the scratch")
	}
}

// TestTransitionsAsTheCriteria: replay's table in rows answers every move as the criteria's maps
// do, a missing operation or status included.
func TestTransitionsAsTheCriteria(t *testing.T) {
	rp := loadSet(t).Criteria().Replay
	if len(rp.Modes) == 0 {
		t.Fatal("no modes")
	}
	// A table larger than a real one, which the replayer keeps out of its own arrays.
	big := map[string]map[string]string{}
	for _, op := range []string{"write", "forget", "reopen"} {
		big[op] = map[string]string{}
		for i := 0; i < 20; i++ {
			big[op]["s"+strconv.Itoa(i)] = op + strconv.Itoa(i%7)
		}
	}
	modes := map[string]map[string]map[string]string{"big": big}
	for name, mode := range rp.Modes {
		modes[name] = mode
	}
	for name, mode := range modes {
		var p replayer
		p.setTable(mode)
		if (p.big != nil) != (name == "big") {
			t.Fatalf("%s: the replayer's table outgrew its arrays: %v", name, p.big != nil)
		}
		table := p.table()
		statuses := []string{rp.Initial, rp.Live, "", "no-such-status", "s3"}
		ops := []string{"", "no-such-op"}
		for op, moves := range mode {
			ops = append(ops, op)
			for from, to := range moves {
				statuses = append(statuses, from, to)
			}
		}
		for _, op := range ops {
			for _, from := range statuses {
				wantTo, wantOK := mode[op][from]
				if to, ok := table.move(op, from); to != wantTo || ok != wantOK {
					t.Errorf("%s: %q from %q: %q %v, want %q %v", name, op, from, to, ok, wantTo, wantOK)
				}
			}
		}
	}
}

// TestFillAsAReplacer: the verdict line's one-pass fill gives what a strings.Replacer of the same
// names gives, on the criteria's templates and on braces that name nothing.
func TestFillAsAReplacer(t *testing.T) {
	w := loadSet(t).Criteria().Words
	vals := map[string]string{"events": "1000", "forgets": "{forgets}", "check_end": "2026-12-06T00:00:00Z", "outside": ""}
	var pairs []string
	for k, v := range vals {
		pairs = append(pairs, "{"+k+"}", v)
	}
	rep := strings.NewReplacer(pairs...)
	value := func(name string) (string, bool) { v, ok := vals[name]; return v, ok }
	for _, tmpl := range []string{w.Verdict, w.VerdictDoesNotApply, "", "{", "}", "{}", "{{events}}", "{events",
		"a{b{events}c}{outside}{check_end}{forgets}{events}", "{no}{events}{", "{ events}{events }"} {
		if got, want := fill(tmpl, value), rep.Replace(tmpl); got != want {
			t.Errorf("fill(%q) = %q, want %q", tmpl, got, want)
		}
	}
}

// TestLowerASCII holds the eight-bytes-at-a-time lowering to the byte loop it stands for, on every
// byte value in every position of a word and on random text.
func TestLowerASCII(t *testing.T) {
	check := func(in []byte) {
		t.Helper()
		want := asciiOnlyLower(string(in))
		got := append([]byte(nil), in...)
		changed := lowerASCII(got)
		if string(got) != want || changed != (want != string(in)) {
			t.Fatalf("lowerASCII(%q) = %q (changed %v), want %q", in, got, changed, want)
		}
	}
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 11; pos++ {
			in := []byte("abcdefghijk")
			in[pos] = byte(c)
			check(in)
			in = []byte("ZZZZZZZZZZZ")
			in[pos] = byte(c)
			check(in)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		in := make([]byte, rng.IntN(40))
		for i := range in {
			in[i] = byte(rng.IntN(256))
		}
		check(in)
	}
}

// TestIntegerLitMatchesParseInt: the summed fast path reads every literal as strconv.ParseInt
// does, around the eighteen digits it takes and the bounds FE-R-9 sets.
func TestIntegerLitMatchesParseInt(t *testing.T) {
	lits := []string{"0", "-0", "1", "-1", "7", "10", "01", "-01", "", "-", "1.0", "1e3", "+1",
		"999999999999999999", "-999999999999999999", "1000000000000000000", "9007199254740991",
		"9007199254740992", "-9007199254740991", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "99999999999999999999"}
	for i := range 19 {
		lits = append(lits, "1"+strings.Repeat("0", i), "-"+strings.Repeat("9", i+1))
	}
	for _, s := range lits {
		for _, lo := range []int64{0, 1} {
			n, ok := integerLit(s, lo)
			want, err := strconv.ParseInt(s, 10, 64)
			wantOK := integerText(s) && err == nil && want >= lo && want <= maxInt
			if ok != wantOK || (ok && n != want) {
				t.Errorf("integerLit(%q, %d) = %d, %v; ParseInt reads %d, %v", s, lo, n, ok, want, wantOK)
			}
		}
	}
}
