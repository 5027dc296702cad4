package x402

import (
	"net/http"
	"time"
)

// Error reasons. They are the strings of the TS reference (@x402/svm 2.27, "invalid_exact_svm_*")
// where one exists, and our own otherwise. They are static and safe to show to clients.
const (
	ReasonInvalidPayload          = "invalid_payload"
	ReasonInvalidVersion          = "invalid_x402_version"
	ReasonInvalidScheme           = "invalid_scheme"
	ReasonInvalidNetwork          = "invalid_network"
	ReasonNoMatchingRequirements  = "invalid_payment_requirements"
	ReasonMissingFeePayer         = "invalid_exact_svm_payload_missing_fee_payer"
	ReasonFeePayerNotManaged      = "invalid_exact_svm_fee_payer_not_managed_by_facilitator"
	ReasonChallengeInvalid        = "challenge_invalid"
	ReasonChallengeExpired        = "challenge_expired"
	ReasonUndecodable             = "invalid_exact_svm_payload_transaction_could_not_be_decoded"
	ReasonVersion                 = "invalid_exact_svm_payload_transaction_version"
	ReasonLookupTables            = "invalid_exact_svm_payload_address_table_lookups"
	ReasonIndexOutOfRange         = "invalid_exact_svm_payload_account_index_out_of_range"
	ReasonDuplicateAccount        = "invalid_exact_svm_payload_duplicate_account_key"
	ReasonFeePayerMismatch        = "invalid_exact_svm_fee_payer_mismatch"
	ReasonExcessiveSigners        = "invalid_exact_svm_payload_excessive_signers"
	ReasonTooFewSigners           = "invalid_exact_svm_payload_too_few_signers"
	ReasonSignatureInvalid        = "invalid_exact_svm_payload_signature_invalid"
	ReasonFeePayerSlotNotEmpty    = "invalid_exact_svm_payload_fee_payer_signature_present"
	ReasonInstructionsLength      = "invalid_exact_svm_payload_transaction_instructions_length"
	ReasonComputeLimit            = "invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction"
	ReasonComputeLimitTooHigh     = "invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction_too_high"
	ReasonComputePrice            = "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction"
	ReasonComputePriceTooHigh     = "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high"
	ReasonNoTransfer              = "invalid_exact_svm_payload_no_transfer_instruction"
	ReasonToken2022               = "invalid_exact_svm_payload_token_2022_not_accepted"
	ReasonAmountMismatch          = "invalid_exact_svm_payload_amount_mismatch"
	ReasonMintMismatch            = "invalid_exact_svm_payload_mint_mismatch"
	ReasonDecimalsMismatch        = "invalid_exact_svm_payload_decimals_mismatch"
	ReasonRecipientMismatch       = "invalid_exact_svm_payload_recipient_mismatch"
	ReasonFeePayerTransferring    = "invalid_exact_svm_payload_transaction_fee_payer_transferring_funds"
	ReasonAuthorityNotClient      = "invalid_exact_svm_payload_authority_not_client_signer"
	ReasonUnknownFourth           = "invalid_exact_svm_payload_unknown_fourth_instruction"
	ReasonMemoCount               = "invalid_exact_svm_payload_memo_count"
	ReasonMemoMismatch            = "invalid_exact_svm_payload_memo_mismatch"
	ReasonSimulationFailed        = "invalid_exact_svm_transaction_simulation_failed"
	ReasonTransactionFailed       = "invalid_exact_svm_transaction_failed"
	ReasonBlockhashExpired        = "blockhash_expired"
	ReasonDuplicateSettlement     = "duplicate_settlement"
	ReasonSettlementPending       = "settlement_pending"
	ReasonInsufficientFunds       = "insufficient_funds"
	ReasonRPCUnavailable          = "rpc_unavailable"
	ReasonResumeWindowClosed      = "resume_window_closed"
	ReasonResumePayerMismatch     = "resume_payer_mismatch"
	ReasonPayerBusy               = "payer_payment_in_flight"
	ReasonSettlementUnverifiable  = "settlement_unverifiable"
	ReasonTransferNotObservedOnce = "settlement_transfer_not_observed"
)

// Reasons of the settlement's own refusals beside those of the checklist.
const (
	// ReasonDeadline is the 503 reason of a payment not broadcast because the request's
	// deadline was too close after the checks before it (a slow RPC).
	ReasonDeadline = "request_deadline"
	// ReasonPaymentsPaused is the 503 reason of a payment refused because the fee payer's
	// global failed-fee budget is spent (or would be by the payments now in flight).
	ReasonPaymentsPaused = "payments_paused"
	// ReasonPayerFeeBudget is the 429 reason of a payer whose failed transactions used up the
	// fee budget.
	ReasonPayerFeeBudget = "payer_fee_budget"
)

// Rejection is a refused payment: the checklist item that refused it and a static reason.
type Rejection struct {
	// Item is the checklist item id (C01..C18 of docs/x402.md, S19.. for settlement).
	Item string
	// Reason is the client-facing error reason.
	Reason string
}

// Error implements error with static text only.
func (r *Rejection) Error() string { return "x402: payment refused at " + r.Item + ": " + r.Reason }

func reject(item, reason string) *Rejection { return &Rejection{Item: item, Reason: reason} }

// Unavailable is a settlement that could not proceed for a reason on our side (RPC down,
// settlement pending, store failure): HTTP 503, no audit, and no charge unless TxSig is set
// and later reconciles.
type Unavailable struct {
	Item   string
	Reason string
	// TxSig is set when a broadcast may have happened (settlement_pending).
	TxSig string
}

// Error implements error with static text.
func (u *Unavailable) Error() string {
	return "x402: settlement unavailable at " + u.Item + ": " + u.Reason
}

// HTTPStatus is 503.
func (u *Unavailable) HTTPStatus() int { return http.StatusServiceUnavailable }

func unavailable(item, reason string) *Unavailable { return &Unavailable{Item: item, Reason: reason} }

// Throttled is a payment refused before any broadcast because its payer is over a budget:
// HTTP 429 with Retry-After, nothing broadcast, nothing charged.
type Throttled struct {
	Item   string
	Reason string
	// RetryAfter is when the budget admits this payment again.
	RetryAfter time.Duration
}

// Error implements error with static text.
func (t *Throttled) Error() string { return "x402: payment throttled at " + t.Item + ": " + t.Reason }

// HTTPStatus is 429.
func (t *Throttled) HTTPStatus() int { return http.StatusTooManyRequests }

// Paused is a payment refused before any broadcast because the fee payer's global failed-fee
// budget is spent: HTTP 503 payments_paused with Retry-After, nothing broadcast, nothing charged.
type Paused struct {
	// RetryAfter is when the budget may admit a payment again.
	RetryAfter time.Duration
}

// Error implements error with static text.
func (p *Paused) Error() string { return "x402: payments paused: " + ReasonPaymentsPaused }

// HTTPStatus is 503.
func (p *Paused) HTTPStatus() int { return http.StatusServiceUnavailable }
