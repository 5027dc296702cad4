package strictjson

import (
	"strings"
	"testing"
)

// TestDecode holds the reader to the strict-JSON reading (R-3 / FE-R-3) both oracles rely on.
func TestDecode(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		name, body string
		ok         bool
	}{
		{"R-3-plain-object", `{"a":[1,"x",true,null]}`, true},
		{"R-3-duplicate-member", `{"a":1,"a":2}`, false},
		{"R-3-duplicate-member-by-escape", `{"name":1,"n\u0061me":2}`, false},
		{"R-3-lone-surrogate", `"\ud800"`, false},
		{"R-3-surrogate-pair", `"\ud83d\ude00"`, true},
		{"R-3-byte-order-mark", "\ufeff{}", false},
		{"R-3-invalid-utf8", "\"\xff\"", false},
		{"R-3-trailing-value", `{} {}`, false},
		{"R-3-leading-zero", `01`, false},
		{"R-3-depth-at-cap", deep(4), true},
		{"R-3-depth-over-cap", deep(5), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.body), 4)
			if (err == nil) != tc.ok {
				t.Fatalf("Decode(%q): err = %v, want ok = %v", tc.body, err, tc.ok)
			}
		})
	}
	v, err := Decode([]byte(`[1.50]`), 2)
	if err != nil || v.([]any)[0] != Number("1.50") {
		t.Fatalf("a number keeps its literal text: %v %v", v, err)
	}
}
