package x402

import (
	"encoding/base64"
	"testing"
)

// FuzzVerify feeds hostile bytes to the header decoder and the transaction checks: they must
// never panic (solana-go panics on some malformed indices; we bounds-check first).
func FuzzVerify(f *testing.F) {
	k := newKit(f)
	valid := k.build(f, k.valid())
	f.Add(valid)
	f.Add(valid[:len(valid)/2])
	f.Add([]byte{0x02})
	f.Add([]byte{0xff, 0xff, 0x03})
	p := k.valid()
	p.rawMut = func(b []byte) []byte { b[len(b)-40] = 0xff; return b }
	f.Add(k.build(f, p))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = k.v.VerifyTransaction(b, k.memo)
		_, _ = k.v.VerifyHeader(string(b))
		_, _ = k.v.VerifyHeader(base64.StdEncoding.EncodeToString(b))
		pl := k.payload(b)
		_, _ = k.v.VerifyPayload(pl)
		// Mutate one byte of the valid transaction at a fuzzed position too.
		if len(b) >= 2 {
			m := append([]byte(nil), valid...)
			m[int(b[0])*int(b[1])%len(m)] ^= b[len(b)-1] | 1
			_, _ = k.v.VerifyTransaction(m, k.memo)
		}
	})
}
