package client

import (
	"encoding/base64"
	"encoding/json"
	"errors"
)

// The x402 v2 and sign-in-with-x wire, as a caller reads and writes it. The client keeps its own
// copy of these shapes (it does not import the server's) so that its tests check the published
// contract from the outside.

// Header names of the x402 v2 HTTP transport and of sign-in-with-x.
const (
	HeaderPaymentRequired  = "PAYMENT-REQUIRED"
	HeaderPaymentSignature = "PAYMENT-SIGNATURE"
	HeaderPaymentResponse  = "PAYMENT-RESPONSE"
	HeaderSIWX             = "SIGN-IN-WITH-X"
	HeaderSIWXChallenge    = "SIGN-IN-WITH-X-CHALLENGE"
	// ExtensionSIWX is the extensions member that carries a sign-in-with-x challenge.
	ExtensionSIWX = "sign-in-with-x"
)

// Resource describes the paid resource.
type Resource struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// Requirements is one entry of PaymentRequired.accepts. Extra is kept as sent, because the
// payment echoes the accepted requirements verbatim.
type Requirements struct {
	Scheme            string                     `json:"scheme"`
	Network           string                     `json:"network"`
	Amount            string                     `json:"amount"`
	Asset             string                     `json:"asset"`
	PayTo             string                     `json:"payTo"`
	MaxTimeoutSeconds int                        `json:"maxTimeoutSeconds"`
	Extra             map[string]json.RawMessage `json:"extra,omitempty"`
}

// extraString returns the string member name of Extra ("" when absent or not a string).
func (r *Requirements) extraString(name string) string {
	var s string
	if raw, ok := r.Extra[name]; ok {
		if json.Unmarshal(raw, &s) != nil {
			return ""
		}
	}
	return s
}

// PaymentRequired is the decoded PAYMENT-REQUIRED header of a 402.
type PaymentRequired struct {
	X402Version int                        `json:"x402Version"`
	Error       string                     `json:"error,omitempty"`
	Resource    Resource                   `json:"resource"`
	Accepts     []Requirements             `json:"accepts"`
	Extensions  map[string]json.RawMessage `json:"extensions,omitempty"`
}

// ExactPayload is the SVM exact scheme payload: the partially signed transaction, base64.
type ExactPayload struct {
	Transaction string `json:"transaction"`
}

// PaymentPayload is the PAYMENT-SIGNATURE header the client sends.
type PaymentPayload struct {
	X402Version int          `json:"x402Version"`
	Resource    *Resource    `json:"resource,omitempty"`
	Accepted    Requirements `json:"accepted"`
	Payload     ExactPayload `json:"payload"`
}

// SettlementResponse is the decoded PAYMENT-RESPONSE header.
type SettlementResponse struct {
	Success     bool   `json:"success"`
	ErrorReason string `json:"errorReason,omitempty"`
	Payer       string `json:"payer,omitempty"`
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
	Amount      string `json:"amount,omitempty"`
	Status      string `json:"status,omitempty"`
}

// Pending is the body of a 202: the payment is broadcast and the report is owed.
type Pending struct {
	Status      string `json:"status"`
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
	Resume      struct {
		Route    string          `json:"route"`
		Until    string          `json:"until"`
		RunsLeft int             `json:"runs_left"`
		How      string          `json:"how"`
		SIWX     json.RawMessage `json:"sign-in-with-x"`
	} `json:"resume"`
}

// SIWXInfo is the server-chosen part of a sign-in-with-x challenge.
type SIWXInfo struct {
	Domain         string   `json:"domain"`
	URI            string   `json:"uri"`
	Version        string   `json:"version"`
	Nonce          string   `json:"nonce"`
	IssuedAt       string   `json:"issuedAt"`
	ExpirationTime string   `json:"expirationTime,omitempty"`
	NotBefore      string   `json:"notBefore,omitempty"`
	Statement      string   `json:"statement,omitempty"`
	RequestID      string   `json:"requestId,omitempty"`
	Resources      []string `json:"resources,omitempty"`
}

// SupportedChain is one chain a challenge accepts a proof from.
type SupportedChain struct {
	ChainID string `json:"chainId"`
	Type    string `json:"type"`
}

// SIWXChallenge is the sign-in-with-x extension object of a challenge answer.
type SIWXChallenge struct {
	Info            SIWXInfo         `json:"info"`
	SupportedChains []SupportedChain `json:"supportedChains"`
	Schema          json.RawMessage  `json:"schema,omitempty"`
}

// SIWXProof is the JSON inside the SIGN-IN-WITH-X header: every info field echoed, plus the
// signer's address, chain, key type and signature.
type SIWXProof struct {
	SIWXInfo
	Address         string `json:"address"`
	ChainID         string `json:"chainId"`
	Type            string `json:"type"`
	Signature       string `json:"signature"`
	SignatureScheme string `json:"signatureScheme,omitempty"`
}

// ChallengeBody is the 401 body that asks for a proof.
type ChallengeBody struct {
	Error       string                     `json:"error"`
	Message     string                     `json:"message"`
	X402Version int                        `json:"x402Version"`
	Extensions  map[string]json.RawMessage `json:"extensions"`
}

var errHeader = errors.New("client: header is not base64 JSON")

// encodeHeader is the x402 v2 header encoding: standard base64 of compact JSON.
func encodeHeader(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// decodeHeader decodes a base64 JSON header value into v.
func decodeHeader(h string, v any) error {
	raw, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		if raw, err = base64.RawStdEncoding.DecodeString(h); err != nil {
			return errHeader
		}
	}
	if json.Unmarshal(raw, v) != nil {
		return errHeader
	}
	return nil
}
