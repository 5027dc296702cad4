package api

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/scopehygiene/scope-hygiene/server/siwx"
)

// Caller rules of the service layer (criteria interpretations, beside R-5).
const (
	// RuleCallerInvalid: the export's caller member is not a wallet address.
	RuleCallerInvalid = "caller_invalid"
	// RuleCallerUnproven: a request named a caller wallet without a valid sign-in-with-x proof.
	RuleCallerUnproven = "caller_unproven"
	// RuleCallerNoTokenAccount: the proven wallet has no USDC token account on the payment
	// network (payments on), so a fresh keypair is not a free identity.
	RuleCallerNoTokenAccount = "caller_no_token_account"
	// RuleProofBudget: this client address used up its challenges and failed proofs for now.
	RuleProofBudget = "caller_proof_budget"
)

// WalletChecker is implemented by a Payments that can tell whether a wallet holds a token
// account of the payment asset (one cached RPC read).
type WalletChecker interface {
	HasTokenAccount(ctx context.Context, wallet string) (bool, error)
}

// ProofChallenge is the 401 body (schema/siwx-challenge.schema.json).
type ProofChallenge struct {
	Kind        string                    `json:"kind"`
	Rule        string                    `json:"rule"`
	Error       string                    `json:"error"`
	Message     string                    `json:"message"`
	X402Version int                       `json:"x402Version"`
	Extensions  map[string]siwx.Challenge `json:"extensions"`
}

// proofMessages are the static messages of the 401, by reason.
var proofMessages = map[string]string{
	siwx.ErrUnproven.Error():    "this request names a caller wallet: prove it with a SIGN-IN-WITH-X header signed over the challenge below",
	siwx.ErrMalformed.Error():   "the SIGN-IN-WITH-X header is not base64 of a JSON sign-in-with-x proof; sign the challenge below",
	siwx.ErrInvalid.Error():     "the SIGN-IN-WITH-X proof does not verify for this host, route and purpose; sign the challenge below",
	siwx.ErrExpired.Error():     "the SIGN-IN-WITH-X challenge has expired; sign the fresh challenge below",
	siwx.ErrReplayed.Error():    "the SIGN-IN-WITH-X nonce was already used; sign the fresh challenge below",
	siwx.ErrWrongWallet.Error(): "the SIGN-IN-WITH-X proof is by another wallet than the one this request names; sign the challenge below with it",
}

// identifyCaller is the caller stage of a free call (a pre-check, an unpriced audit). It reads the
// export's caller member and then gives back the decoded export and the evaluation slot: the
// proof and the allowance are store work. A caller member that is not a wallet is refused
// (caller_invalid); a named wallet must be proven with sign-in-with-x.
func (r *request) identifyCaller() error {
	r.caller, r.callerErr = r.prep.Caller()
	r.releasePrepared()
	r.leaveSlot()
	if r.callerErr != nil {
		return r.s.refuse(r.c, &Refusal{Rule: RuleCallerInvalid, Status: http.StatusBadRequest,
			Body: map[string]any{"kind": "refusal", "rule": RuleCallerInvalid}})
	}
	if r.caller != "" {
		return r.s.proveCaller(r.c, r.caller, siwx.PurposePrecheck)
	}
	return nil
}

// newProver builds the default prover: over the store's nonce table, on the payment network
// (mainnet without payments), with the configured key or a per-process random one.
func newProver(cfg Config) (*siwx.Prover, error) {
	ns, ok := cfg.Store.(siwx.NonceStore)
	if !ok {
		return nil, errors.New("api: the store has no sign-in-with-x nonce table")
	}
	key := cfg.ProofKey
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, errors.New("api: sign-in-with-x key")
		}
	}
	chain := "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" // mainnet: the identity of a key is the same on every cluster
	if n, ok := cfg.Payments.(NetworkNamer); ok {
		chain, _, _ = n.Network()
	}
	return siwx.New(key, []string{chain}, ns, cfg.Now)
}

// origin is the public origin (scheme://host) of this request.
func (s *Server) origin(c echo.Context) string {
	return strings.TrimSuffix(s.absURL(c, "/"), "/")
}

// proofTarget binds a proof to the service's public origin (the configured public base URL; the
// request's Host only when none is configured, which payments do not allow), the route and purpose.
func (s *Server) proofTarget(c echo.Context, purpose string) siwx.Target {
	host := c.Request().Host
	if u, err := url.Parse(s.cfg.PublicBaseURL); err == nil && u.Host != "" {
		host = u.Host
	}
	return siwx.Target{Host: host, Origin: s.origin(c), Route: c.Request().URL.Path, Purpose: purpose}
}

// proveCaller checks that the request's SIGN-IN-WITH-X proof is by wallet, for purpose. It
// returns nil when proven; otherwise it has answered (401 with a fresh challenge, 429 when this
// client address is out of budget, 403 without a token account) and returns errAnswered or an
// internal error.
func (s *Server) proveCaller(c echo.Context, wallet, purpose string) error {
	t := s.proofTarget(c, purpose)
	hdr := c.Request().Header.Get(siwx.HeaderProof)
	var reason error = siwx.ErrUnproven
	if hdr != "" {
		addr, err := s.prover.Verify(c.Request().Context(), hdr, t)
		switch {
		case err == nil && addr != wallet:
			reason = siwx.ErrWrongWallet
		case err == nil && purpose == siwx.PurposePrecheck:
			return s.checkTokenAccount(c, addr)
		case err == nil:
			return nil // a resume: the payer's payment already proved its token account
		case errors.Is(err, siwx.ErrUnproven), errors.Is(err, siwx.ErrMalformed), errors.Is(err, siwx.ErrInvalid), errors.Is(err, siwx.ErrWrongDomain),
			errors.Is(err, siwx.ErrExpired), errors.Is(err, siwx.ErrReplayed):
			reason = err
		default:
			return s.internalAnswered(c, "sign-in-with-x nonce store failed")
		}
	}
	s.cfg.Metrics.Refusals.WithLabelValues(RuleCallerUnproven).Inc()
	return s.challenge(c, t, reason)
}

// challenge answers 401 with a fresh challenge bound to t, spending one unit of the client
// address's budget (429 when it is used up).
func (s *Server) challenge(c echo.Context, t siwx.Target, reason error) error {
	if ok, retry := s.proofBudget.Take(c.RealIP()); !ok {
		c.Response().Header().Set("Retry-After", itoa(int((retry.Seconds())+1)))
		return s.refuse(c, &Refusal{Rule: RuleProofBudget, Status: http.StatusTooManyRequests,
			Body: map[string]any{"kind": "refusal", "rule": RuleProofBudget, "cap": s.proofBudget.PerWindow,
				"window_ms": s.proofBudget.Window.Milliseconds(), "retry_after_ms": retry.Milliseconds()}})
	}
	ch, err := s.prover.Challenge(t)
	if err != nil {
		return s.internalAnswered(c, "sign-in-with-x challenge failed")
	}
	hv, err := siwx.EncodeChallenge(ch)
	if err != nil {
		return s.internalAnswered(c, "sign-in-with-x challenge failed")
	}
	h := c.Response().Header()
	h.Set(siwx.HeaderChallenge, hv)
	h.Set("Cache-Control", "no-store")
	h.Add("Access-Control-Expose-Headers", siwx.HeaderChallenge)
	c.Set(keyRule, RuleCallerUnproven)
	msg := proofMessages[reason.Error()]
	if reason == siwx.ErrWrongDomain { // the expected domain is configuration, never request content
		msg = "the SIGN-IN-WITH-X proof was signed for another domain; this service's domain is " + t.Host + "; sign the challenge below"
	}
	if err := c.JSON(http.StatusUnauthorized, ProofChallenge{Kind: "refusal", Rule: RuleCallerUnproven, Error: reason.Error(),
		Message: msg, X402Version: 2, Extensions: map[string]siwx.Challenge{siwx.Extension: ch}}); err != nil {
		return err
	}
	return errAnswered
}

// checkTokenAccount refuses a proven wallet without a USDC token account on the payment network
// (payments on only).
func (s *Server) checkTokenAccount(c echo.Context, wallet string) error {
	wc, ok := s.cfg.Payments.(WalletChecker)
	if !ok {
		return nil
	}
	has, err := wc.HasTokenAccount(c.Request().Context(), wallet)
	if err != nil {
		return s.internalAnswered(c, "token account check failed")
	}
	if !has {
		return s.refuse(c, &Refusal{Rule: RuleCallerNoTokenAccount, Status: http.StatusForbidden,
			Body: map[string]any{"kind": "refusal", "rule": RuleCallerNoTokenAccount}})
	}
	return nil
}
