package siwx

import solana "github.com/gagliardetto/solana-go"

func pkString(k [32]byte) string  { return solana.PublicKeyFromBytes(k[:]).String() }
func sigString(s [64]byte) string { return solana.SignatureFromBytes(s[:]).String() }
