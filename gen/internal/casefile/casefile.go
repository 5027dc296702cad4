// Package casefile is the corpus case format both oracles write (gen and gen/forget): a case's
// exact request bytes, its file encoding and the names a case may have. Only the format is
// shared; each oracle decides its cases' outcomes alone.
package casefile

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"regexp"
)

// ErrBody is a case whose body is missing, given twice, or not decodable.
var ErrBody = errors.New("corpus case body is missing or ambiguous")

// nameRE is what a case name may be: it is also the case's file name.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// ValidName reports whether name may name a case (and its file).
func ValidName(name string) bool { return nameRE.MatchString(name) }

// SubmittedBytes returns the exact request bytes of a case: the decoded body_base64, or the body
// serialized with encoding/json (json.Marshal), as the corpus format states (numbers pass through
// float64, so bodies keep integers below 2^53). Exactly one of the two must be given.
func SubmittedBytes(body json.RawMessage, bodyBase64 string) ([]byte, error) {
	if (len(body) == 0) == (bodyBase64 == "") {
		return nil, ErrBody
	}
	if bodyBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(bodyBase64)
		if err != nil {
			return nil, ErrBody
		}
		return b, nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, ErrBody
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, ErrBody
	}
	return b, nil
}

// Encode is a case or index file's bytes: indented JSON and a final newline, byte for byte
// deterministic.
func Encode(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
