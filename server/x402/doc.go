// Package x402 implements self-facilitated x402 v2 payments ("exact" scheme) on Solana for the
// paid POST /audit endpoint of scope-hygiene.
//
// The package is split by concern:
//
//   - wire.go: the v2 wire types and the base64-JSON HTTP headers PAYMENT-REQUIRED,
//     PAYMENT-SIGNATURE and PAYMENT-RESPONSE.
//   - challenge.go: the server-issued, HMAC-protected, expiring challenge carried in extra.memo.
//   - verify.go: the offline verification (items C01..C03 of the spec on the payload) run on
//     every payment before the fee payer signs anything; checklist.go: items C04..C16 on the
//     transaction, one named check each, in the checklist's order.
//   - refusals.go: the refusals a payment can meet (402, 429, 503) and their static reasons.
//   - settle.go: the settlement state machine's entry (reserve, or pick up an existing row)
//     behind a small RPC interface; broadcast.go: simulate, send, confirm, getTransaction;
//     budget.go: the per-payer and the global failed-fee budgets; claim.go: the audit runs a
//     settled payment starts, its ledger row and its delivery.
//   - resume.go: the verified-marker resume of a settled payment whose report was not delivered,
//     and reconciliation of ambiguous outcomes.
//   - cad.go: the operator-supplied daily USD/CAD rate table for the ledger's CAD block.
//
// Nothing in this package ever sees, stores or logs export content: it handles payment headers
// only, and every error it produces is a static string plus numbers.
package x402
