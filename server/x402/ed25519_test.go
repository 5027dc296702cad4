package x402

import "crypto/ed25519"

// ed25519Key expands a 32-byte seed into a 64-byte ed25519 private key.
func ed25519Key(seed []byte) []byte { return ed25519.NewKeyFromSeed(seed) }
