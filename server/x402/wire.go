package x402

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Header names of the x402 v2 HTTP transport.
const (
	HeaderPaymentRequired  = "PAYMENT-REQUIRED"
	HeaderPaymentSignature = "PAYMENT-SIGNATURE"
	HeaderPaymentResponse  = "PAYMENT-RESPONSE"
)

// Version is the only x402 protocol version this package speaks.
const Version = 2

// SchemeExact is the only payment scheme offered.
const SchemeExact = "exact"

// MaxHeaderBytes caps the size of an incoming PAYMENT-SIGNATURE header (base64 text). A real
// payload is about 1.3 KB; anything beyond this is refused before decoding.
const MaxHeaderBytes = 8192

// Resource describes the paid resource inside PaymentRequired and PaymentPayload.
type Resource struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// Extra is the scheme-specific part of PaymentRequirements for the SVM exact scheme.
type Extra struct {
	FeePayer string `json:"feePayer"`
	Memo     string `json:"memo,omitempty"`
	// RecentBlockhash and LastValidBlockHeight are optional hints some servers add; they are
	// never compared when matching the accepted requirements.
	RecentBlockhash      string          `json:"recentBlockhash,omitempty"`
	LastValidBlockHeight json.RawMessage `json:"lastValidBlockHeight,omitempty"`
	// Price states the criteria's price label and status beside the amount (informational;
	// never compared when matching).
	Price *PriceTag `json:"price,omitempty"`
}

// PriceTag is the published label and status of the price, carried in extra.price.
type PriceTag struct {
	Label  string `json:"label"`
	Status string `json:"status"`
}

// PaymentRequirements is one entry of PaymentRequired.accepts.
type PaymentRequirements struct {
	Scheme            string `json:"scheme"`
	Network           string `json:"network"`
	Amount            string `json:"amount"`
	Asset             string `json:"asset"`
	PayTo             string `json:"payTo"`
	MaxTimeoutSeconds int    `json:"maxTimeoutSeconds"`
	Extra             Extra  `json:"extra"`
}

// PaymentRequired is the body of the PAYMENT-REQUIRED header sent with a 402.
type PaymentRequired struct {
	X402Version int                   `json:"x402Version"`
	Error       string                `json:"error,omitempty"`
	Resource    Resource              `json:"resource"`
	Accepts     []PaymentRequirements `json:"accepts"`
	Extensions  map[string]any        `json:"extensions,omitempty"`
}

// ExactPayload is the scheme payload of an SVM exact payment: the partially signed transaction.
type ExactPayload struct {
	Transaction string `json:"transaction"`
}

// PaymentPayload is the decoded PAYMENT-SIGNATURE header.
type PaymentPayload struct {
	X402Version int                 `json:"x402Version"`
	Resource    *Resource           `json:"resource,omitempty"`
	Accepted    PaymentRequirements `json:"accepted"`
	Payload     ExactPayload        `json:"payload"`
	Extensions  map[string]any      `json:"extensions,omitempty"`
}

// SettlementResponse is the body of the PAYMENT-RESPONSE header.
type SettlementResponse struct {
	Success     bool   `json:"success"`
	ErrorReason string `json:"errorReason,omitempty"`
	Payer       string `json:"payer,omitempty"`
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
	Amount      string `json:"amount,omitempty"`
	// Status is "pending" on a 202: broadcast, not yet confirmed (resume to collect).
	Status string `json:"status,omitempty"`
}

// ErrHeaderTooLarge is returned when a PAYMENT-SIGNATURE header exceeds MaxHeaderBytes.
var ErrHeaderTooLarge = errors.New("x402: payment header too large")

// ErrHeaderEncoding is returned when a PAYMENT-SIGNATURE header is not base64 JSON.
var ErrHeaderEncoding = errors.New("x402: payment header is not base64 JSON")

// EncodeHeader serialises v as standard-base64 JSON, the encoding of every x402 v2 header.
func EncodeHeader(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("x402: encode header: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// DecodePaymentPayload decodes a PAYMENT-SIGNATURE header value. It enforces the size cap,
// accepts standard base64 with or without padding, and rejects unknown top-level members only
// implicitly (they are ignored). Errors carry no part of the input.
func DecodePaymentPayload(header string) (*PaymentPayload, error) {
	if len(header) > MaxHeaderBytes {
		return nil, ErrHeaderTooLarge
	}
	raw, err := base64.StdEncoding.DecodeString(header)
	if err != nil {
		raw, err = base64.RawStdEncoding.DecodeString(header)
		if err != nil {
			return nil, ErrHeaderEncoding
		}
	}
	var p PaymentPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, ErrHeaderEncoding
	}
	return &p, nil
}

// DecodePaymentRequired decodes a PAYMENT-REQUIRED header value (used by tests and tools).
func DecodePaymentRequired(header string) (*PaymentRequired, error) {
	raw, err := base64.StdEncoding.DecodeString(header)
	if err != nil {
		return nil, ErrHeaderEncoding
	}
	var p PaymentRequired
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, ErrHeaderEncoding
	}
	return &p, nil
}

// DecodeSettlementResponse decodes a PAYMENT-RESPONSE header value (used by tests and tools).
func DecodeSettlementResponse(header string) (*SettlementResponse, error) {
	raw, err := base64.StdEncoding.DecodeString(header)
	if err != nil {
		return nil, ErrHeaderEncoding
	}
	var p SettlementResponse
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, ErrHeaderEncoding
	}
	return &p, nil
}
