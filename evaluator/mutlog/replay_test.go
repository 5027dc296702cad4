package mutlog

import (
	"regexp"
	"strings"
	"testing"
	"unsafe"
)

// TestCanonicalSteps holds the allocation-free steps to their plain definitions (FE-R-12), and
// checks that an already canonical value comes back as the very same string.
func TestCanonicalSteps(t *testing.T) {
	steps := []string{"trim_ascii_space", "ascii_lower"}
	// ascii_lower leaves non-ASCII letters alone, unlike strings.ToLower.
	plain := func(s string) string { return asciiOnlyLower(strings.Trim(s, " \t\n\r")) }
	var scratch []byte
	for _, s := range []string{"", " ", "a", "A", " \tTenant-A\r\n", "tenant-a", "ÄBC", "x\u00a0Y ", "\v a \v", "MiXeD case"} {
		want := plain(s)
		if got := canonical(steps, s, &scratch); got != want {
			t.Errorf("canonical(%q) with scratch = %q, want %q", s, got, want)
		}
		if got := canonical(steps, s, nil); got != want {
			t.Errorf("canonical(%q) = %q, want %q", s, got, want)
		}
	}
	s := "tenant-a"
	if got := canonical(steps, s, &scratch); unsafe.StringData(got) != unsafe.StringData(s) {
		t.Error("a canonical value was copied")
	}
	if n := testing.AllocsPerRun(10, func() { canonical(steps, " TENANT-A ", &scratch) }); n != 0 {
		t.Errorf("canonical with scratch allocates %v times", n)
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
