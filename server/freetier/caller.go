// Package freetier enforces the free pre-check allowance (criteria free_tier, R-30): per caller
// wallet (body member caller, R-5) or, without one, per client address, a daily count and a
// minimum interval, decided atomically by the shared store.
package freetier

import (
	"encoding/json"
	"errors"
)

const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

var digit = func() (d [256]int8) {
	for i := range d {
		d[i] = -1
	}
	for i := 0; i < len(alphabet); i++ {
		d[alphabet[i]] = int8(i)
	}
	return d
}()

// PublicKeySize is the size of a Solana public key.
const PublicKeySize = 32

// maxKeyChars is the longest base58 text of 32 bytes.
const maxKeyChars = 44

// ErrInvalidCaller means caller is present but is not a base58 Solana public key.
var ErrInvalidCaller = errors.New("caller is not a base58 Solana public key")

// ParseCaller decodes a base58 (Bitcoin alphabet) Solana public key: exactly 32 bytes, in its
// canonical text (no extra leading '1's, which would decode to extra zero bytes).
func ParseCaller(s string) ([PublicKeySize]byte, error) {
	var out [PublicKeySize]byte
	if len(s) == 0 || len(s) > maxKeyChars {
		return out, ErrInvalidCaller
	}
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	// Big-endian base-256 accumulator; 44 base58 digits never need more than 33 bytes.
	var acc [maxKeyChars]byte
	n := 0 // bytes used at the end of acc
	for i := zeros; i < len(s); i++ {
		c := int(digit[s[i]])
		if c < 0 {
			return out, ErrInvalidCaller
		}
		for j := len(acc) - 1; j >= len(acc)-n; j-- {
			c += int(acc[j]) * 58
			acc[j] = byte(c)
			c >>= 8
		}
		for c > 0 {
			n++
			acc[len(acc)-n] = byte(c)
			c >>= 8
		}
	}
	if zeros+n != PublicKeySize {
		return out, ErrInvalidCaller
	}
	copy(out[zeros:], acc[len(acc)-n:])
	return out, nil
}

// EncodeCaller renders a public key in base58 (the inverse of ParseCaller).
func EncodeCaller(k [PublicKeySize]byte) string {
	zeros := 0
	for zeros < len(k) && k[zeros] == 0 {
		zeros++
	}
	var buf [maxKeyChars + 1]byte
	n := 0
	for _, b := range k[zeros:] {
		c := int(b)
		for j := len(buf) - 1; j >= len(buf)-n; j-- {
			c += int(buf[j]) << 8
			buf[j] = byte(c % 58)
			c /= 58
		}
		for c > 0 {
			n++
			buf[len(buf)-n] = byte(c % 58)
			c /= 58
		}
	}
	out := make([]byte, 0, zeros+n)
	for i := 0; i < zeros; i++ {
		out = append(out, '1')
	}
	for _, d := range buf[len(buf)-n:] {
		out = append(out, alphabet[d])
	}
	return string(out)
}

// CallerFromBody reads the top-level member "caller" of a request body (exact name; null means
// absent, R-4). It returns "" when the body carries no caller (or is not a JSON object: the
// engine refuses such a body on its own terms) and ErrInvalidCaller when caller is present but
// not a base58 Solana public key. The value itself never appears in an error.
func CallerFromBody(body []byte) (string, error) {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return "", nil
	}
	raw, ok := top["caller"]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", ErrInvalidCaller
	}
	if _, err := ParseCaller(s); err != nil {
		return "", err
	}
	return s, nil
}
