// Package x402 implements self-facilitated x402 v2 payments ("exact" scheme) on Solana for the
// paid POST /audit endpoint of scope-hygiene.
//
// The package is split by concern:
//
//   - wire.go: the v2 wire types and the base64-JSON HTTP headers PAYMENT-REQUIRED,
//     PAYMENT-SIGNATURE and PAYMENT-RESPONSE.
//   - challenge.go: the server-issued, HMAC-protected, expiring challenge carried in extra.memo.
//   - verify.go: the offline verification checklist (items C01..C18 of the spec) run on every
//     payment before the fee payer signs anything.
//   - settle.go: the settlement state machine (reserve, co-sign, simulate, send, confirm,
//     getTransaction) behind a small RPC interface, and reconciliation of ambiguous outcomes.
//   - resume.go: the verified-marker resume of a settled payment whose report was not delivered.
//   - cad.go: the operator-supplied daily USD/CAD rate table for the ledger's CAD block.
//
// Nothing in this package ever sees, stores or logs export content: it handles payment headers
// only, and every error it produces is a static string plus numbers.
package x402
