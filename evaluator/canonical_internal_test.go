package evaluator

import (
	"testing"
	"unicode/utf16"
)

// TestCompareUTF16: the byte-wise fast path of compareUTF16 orders every pair as comparing the
// UTF-16 code units does, across ASCII, two- and three-byte runes, the private use area above
// the surrogates (U+E000, which UTF-16 orders above a four-byte rune and UTF-8 below) and
// four-byte runes, with shared prefixes that end inside and between runes.
func TestCompareUTF16(t *testing.T) {
	parts := []string{"", "a", "z", "~", "\u00e9", "\u00ea", "\u07ff", "\u0800", "\ue000", "\uffee", "\U00010000", "\U0001f600"}
	var words []string
	for _, p := range parts {
		for _, q := range parts {
			words = append(words, p+q, "scope"+p+q, p+"x"+q)
		}
	}
	ref := func(a, b string) int {
		ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
		for i := 0; i < len(ua) && i < len(ub); i++ {
			if ua[i] != ub[i] {
				return int(ua[i]) - int(ub[i])
			}
		}
		return len(ua) - len(ub)
	}
	sign := func(n int) int { return min(max(n, -1), 1) }
	for _, a := range words {
		for _, b := range words {
			if got, want := sign(compareUTF16(a, b)), sign(ref(a, b)); got != want {
				t.Fatalf("compareUTF16(%+q, %+q) = %d, want %d", a, b, got, want)
			}
		}
	}
}
