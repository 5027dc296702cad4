package rules

import "testing"

func TestSentenceWith(t *testing.T) {
	for _, tc := range []struct{ name, text, phrase, want string }{
		{"middle", "One. It is never a whole-store certification and never proof. Three.", "whole-store certification", "It is never a whole-store certification and never proof."},
		{"first", "Never a certification of the store. Two.", "certification", "Never a certification of the store."},
		{"last without a space after", "One. Never a certification.", "certification", "Never a certification."},
		{"absent", "One. Two.", "certification", ""},
		{"abbreviation inside is kept", "One. Never a certification, e.g.so on. Two.", "certification", "Never a certification, e.g.so on."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SentenceWith(tc.text, tc.phrase); got != tc.want {
				t.Errorf("SentenceWith = %q, want %q", got, tc.want)
			}
		})
	}
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if got := SentenceWith(c.Criteria().Texts.ScopeText, "whole-store certification"); got != "It is never a whole-store certification and never proof that a leak did or did not occur at runtime." {
		t.Errorf("the shipped scope text gives %q", got)
	}
}
