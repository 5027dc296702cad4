package rules

import "strings"

// SentenceWith is the sentence of a criteria text that holds phrase ("" when none does): how the
// local whole-input checks quote the criteria's own words that a report is never a
// certification, instead of retyping them. A sentence ends at ". " or at the end of the text.
func SentenceWith(text, phrase string) string {
	at := strings.Index(text, phrase)
	if at < 0 {
		return ""
	}
	start := strings.LastIndex(text[:at], ". ")
	if start < 0 {
		start = 0
	} else {
		start += 2
	}
	end := strings.Index(text[at:], ". ")
	if end < 0 {
		return text[start:]
	}
	return text[start : at+end+1]
}
