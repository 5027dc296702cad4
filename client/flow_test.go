package client

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"github.com/scopehygiene/scope-hygiene/rules"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	solana "github.com/gagliardetto/solana-go"

	"github.com/scopehygiene/scope-hygiene/server/sign"
	"github.com/scopehygiene/scope-hygiene/server/x402"
)

// contractServer answers as /work/wt/INTERFACES.md says the service does once sign-in-with-x and
// 202 pending are in (the money path's server side is built in parallel): a caller named in the
// body must prove its wallet (401 + challenge, single-use nonces bound to route and purpose); a
// paid audit may answer 202 pending, and only the payer's proof over a challenge bound to
// resume:<transaction> collects the report. Payments are checked with the server's own x402
// verifier. The paid-audit end to end on the real binary is tools/scope-hygiene's dev-chain test.
type contractServer struct {
	t        *testing.T
	srv      *httptest.Server
	signer   *sign.Signer
	cfg      *x402.Config
	ch       *x402.Challenger
	ver      *x402.Verifier
	mu       sync.Mutex
	nonces   map[string]string // nonce -> purpose, deleted on use
	proofs   int               // SIGN-IN-WITH-X headers received
	pending  int               // 202 answers still to give per payment
	fail503  int               // 503 settlement_pending answers still to give
	resumes  int
	lastTx   string
	exported [][]byte
}

const devnetChain = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"

func newContractServer(t *testing.T, pending, fail503 int) *contractServer {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	cfg := &x402.Config{Network: x402.Devnet, RPCURL: "http://127.0.0.1:1", FeePayer: seedKey(1), PayTo: seedKey(2).PublicKey(),
		ChallengeKey: []byte("0123456789abcdef0123456789abcdef"), Price: criteriaPrice(t)}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ch := x402.NewChallenger(cfg, time.Now)
	v, err := x402.NewVerifier(cfg, ch)
	if err != nil {
		t.Fatal(err)
	}
	s := &contractServer{t: t, signer: sign.NewSigner(priv), cfg: cfg, ch: ch, ver: v, nonces: map[string]string{}, pending: pending, fail503: fail503}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *contractServer) challenge(r *http.Request, purpose string) SIWXChallenge {
	b := make([]byte, 16)
	rand.Read(b)
	nonce := hex.EncodeToString(b)
	s.mu.Lock()
	s.nonces[nonce] = purpose
	s.mu.Unlock()
	now := time.Now().UTC()
	return SIWXChallenge{Info: SIWXInfo{Domain: r.Host, URI: s.srv.URL + r.URL.Path, Version: "1", Nonce: nonce,
		IssuedAt: now.Format(time.RFC3339), ExpirationTime: now.Add(5 * time.Minute).Format(time.RFC3339), Statement: purpose},
		SupportedChains: []SupportedChain{{ChainID: devnetChain, Type: "ed25519"}}}
}

func (s *contractServer) unproven(w http.ResponseWriter, r *http.Request, purpose string) {
	ch := s.challenge(r, purpose)
	h, _ := encodeHeader(ch)
	w.Header().Set(HeaderSIWXChallenge, h)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	chJSON, _ := json.Marshal(ch)
	json.NewEncoder(w).Encode(ChallengeBody{Error: "caller_unproven", Message: "prove the wallet", X402Version: 2,
		Extensions: map[string]json.RawMessage{ExtensionSIWX: chJSON}})
}

// proven returns the address a valid, unused proof for purpose names ("" when none).
func (s *contractServer) proven(r *http.Request, purpose string) string {
	h := r.Header.Get(HeaderSIWX)
	if h == "" {
		return ""
	}
	s.mu.Lock()
	s.proofs++
	s.mu.Unlock()
	var p SIWXProof
	if decodeHeader(h, &p) != nil || p.Domain != r.Host || p.Type != "ed25519" || p.ChainID != devnetChain {
		return ""
	}
	s.mu.Lock()
	got, ok := s.nonces[p.Nonce]
	delete(s.nonces, p.Nonce)
	s.mu.Unlock()
	if !ok || got != purpose {
		return ""
	}
	pub, err := solana.PublicKeyFromBase58(p.Address)
	if err != nil {
		return ""
	}
	sig, err := solana.SignatureFromBase58(p.Signature)
	if err != nil || !pub.Verify([]byte(FormatSIWSMessage(p.SIWXInfo, p.Address, p.ChainID)), sig) {
		return ""
	}
	return p.Address
}

func (s *contractServer) signed(w http.ResponseWriter, v any) {
	doc, err := s.signer.Sign(v)
	if err != nil {
		s.t.Error(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(doc)
}

func (s *contractServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.exported = append(s.exported, body)
	s.mu.Unlock()
	switch r.URL.Path {
	case "/criteria":
		doc, _ := sign.Canonical(map[string]any{"criteria_id": "memory-scope-hygiene/v1", sign.CriteriaKeyMember: sign.Publish(s.signer.Public())})
		w.Write(doc)
	case "/precheck":
		if caller := callerOf(body); caller != "" && s.proven(r, "precheck") != caller {
			s.unproven(w, r, "precheck")
			return
		}
		s.signed(w, map[string]any{"kind": "precheck_result", "criteria_revision": "1.0.0"})
	case "/audit":
		s.audit(w, r, body)
	default:
		http.NotFound(w, r)
	}
}

func (s *contractServer) audit(w http.ResponseWriter, r *http.Request, body []byte) {
	hdr := r.Header.Get(HeaderPaymentSignature)
	if hdr == "" {
		memo, _, _ := s.ch.Issue()
		h, _ := x402.EncodeHeader(x402.PaymentRequired{X402Version: 2, Error: "PAYMENT-SIGNATURE header is required",
			Resource: x402.Resource{URL: s.srv.URL + "/audit"}, Accepts: []x402.PaymentRequirements{s.cfg.Requirements(memo)}})
		w.Header().Set(HeaderPaymentRequired, h)
		w.WriteHeader(http.StatusPaymentRequired)
		return
	}
	v, err := s.ver.VerifyHeader(hdr)
	if err != nil {
		s.t.Errorf("the contract server refuses the client's payment: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	tx := v.ClientSignature.String()
	s.mu.Lock()
	s.lastTx = tx
	fail503, pending := s.fail503 > 0, s.pending > 0
	if fail503 {
		s.fail503--
	}
	s.mu.Unlock()
	settle := func(status string) {
		h, _ := x402.EncodeHeader(x402.SettlementResponse{Success: true, Transaction: tx, Network: devnetChain, Payer: v.Payer.String()})
		if status != "" {
			b, _ := json.Marshal(SettlementResponse{Success: true, Transaction: tx, Network: devnetChain, Payer: v.Payer.String(), Status: status})
			h, _ = encodeHeader(json.RawMessage(b))
		}
		w.Header().Set(HeaderPaymentResponse, h)
	}
	if fail503 {
		h, _ := x402.EncodeHeader(x402.SettlementResponse{Success: false, ErrorReason: "settlement_pending", Transaction: tx, Network: devnetChain, Payer: v.Payer.String()})
		w.Header().Set(HeaderPaymentResponse, h)
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"kind":"error","error":"settlement_pending"}`))
		return
	}
	if r.Header.Get(HeaderSIWX) != "" || pending {
		// A resume: only the payer's proof over resume:<tx> collects it.
		if r.Header.Get(HeaderSIWX) != "" {
			if s.proven(r, "resume:"+tx) != v.Payer.String() {
				s.unproven(w, r, "resume:"+tx)
				return
			}
			s.mu.Lock()
			s.resumes++
			s.pending--
			pending = s.pending > 0
			s.mu.Unlock()
		}
		if pending {
			ch := s.challenge(r, "resume:"+tx)
			var p Pending
			p.Status, p.Transaction, p.Network = "pending", tx, devnetChain
			p.Resume.Route, p.Resume.Until, p.Resume.RunsLeft, p.Resume.How = "/audit", time.Now().Add(15*time.Minute).Format(time.RFC3339), 3, "resume"
			p.Resume.SIWX, _ = json.Marshal(ch)
			settle("pending")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusAccepted)
			json.NewEncoder(w).Encode(p)
			return
		}
	}
	settle("")
	s.signed(w, map[string]any{"kind": "audit_report", "criteria_revision": "1.0.0"})
}

func (s *contractServer) client(w solana.PrivateKey) (*Client, *[]string) {
	var lines []string
	return &Client{BaseURL: s.srv.URL, Wallet: w, MaxSpendUnits: 50000, SpendDecimals: 6,
		Chain:    &mintChain{mint: x402.Devnet.USDCMint, owner: solana.TokenProgramID},
		Progress: func(l string) { lines = append(lines, l) },
		Sleep:    func(context.Context, time.Duration) error { return nil }}, &lines
}

func TestPrecheckProvesTheNamedCaller(t *testing.T) {
	wallet := seedKey(5)
	body := []byte(`{"caller":"` + wallet.PublicKey().String() + `","family":"mem0","form":"full_text","records":[]}`)
	t.Run("proved", func(t *testing.T) {
		s := newContractServer(t, 0, 0)
		c, lines := s.client(wallet)
		res, err := c.Precheck(context.Background(), body)
		if err != nil {
			t.Fatalf("%v\n%s", err, strings.Join(*lines, "\n"))
		}
		if _, _, err := c.Criteria(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := Verify(res.Body, s.signer.Public()); err != nil || s.proofs != 1 {
			t.Fatalf("verify %v, proofs sent %d", err, s.proofs)
		}
	})
	t.Run("other_wallet_not_signed", func(t *testing.T) {
		s := newContractServer(t, 0, 0)
		c, _ := s.client(seedKey(6))
		_, err := c.Precheck(context.Background(), body)
		var ce *Error
		if !errors.As(err, &ce) || ce.Kind != KindProof || s.proofs != 0 {
			t.Fatalf("err %v, proofs sent %d", err, s.proofs)
		}
	})
	t.Run("no_wallet", func(t *testing.T) {
		s := newContractServer(t, 0, 0)
		c, _ := s.client(nil)
		_, err := c.Precheck(context.Background(), body)
		var ce *Error
		if !errors.As(err, &ce) || ce.Kind != KindProof || ce.Status != http.StatusUnauthorized {
			t.Fatalf("err %v", err)
		}
	})
}

func TestAuditFollowsPendingWithThePayerProof(t *testing.T) {
	body := []byte(`{"family":"mem0","form":"full_text","records":[]}`)
	for _, c := range []struct {
		name             string
		pending, fail503 int
		resumes          int
	}{
		{"settled_at_once", 0, 0, 0},
		{"202_then_resume", 1, 0, 1},
		{"202_twice_then_resume", 2, 0, 2},
		{"503_pending_then_settled", 0, 2, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newContractServer(t, c.pending, c.fail503)
			cl, lines := s.client(seedKey(7))
			res, err := cl.Audit(context.Background(), body)
			if err != nil {
				t.Fatalf("%v\n%s", err, strings.Join(*lines, "\n"))
			}
			if res.Settlement == nil || res.Settlement.Transaction != s.lastTx || res.Units != 50000 || s.resumes != c.resumes {
				t.Fatalf("settlement %+v, resumes %d (want %d)", res.Settlement, s.resumes, c.resumes)
			}
			if _, err := Verify(res.Body, s.signer.Public()); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("pending_past_the_wait_names_the_transaction", func(t *testing.T) {
		s := newContractServer(t, 1000, 0)
		cl, _ := s.client(seedKey(7))
		cl.PendingFor = time.Nanosecond
		_, err := cl.Audit(context.Background(), body)
		var ce *Error
		if !errors.As(err, &ce) || ce.Kind != KindPayment || ce.Transaction == "" || ce.Transaction != s.lastTx {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("kept_payment_collects_later_without_paying_again", func(t *testing.T) {
		s := newContractServer(t, 1000, 0)
		cl, _ := s.client(seedKey(7))
		cl.PendingFor = time.Nanosecond
		kept := ""
		cl.OnPayment = func(h string) error { kept = h; return nil }
		if _, err := cl.Audit(context.Background(), body); err == nil || kept == "" {
			t.Fatalf("first run: %v, kept %d bytes", err, len(kept))
		}
		s.mu.Lock()
		s.pending = 1 // settled meanwhile: one more 202, then the report
		s.mu.Unlock()
		again, lines := s.client(seedKey(7))
		again.Chain = nil // no chain: a new payment could not even be built
		again.Payment = kept
		res, err := again.Audit(context.Background(), body)
		if err != nil || res.Settlement == nil || res.Settlement.Transaction != s.lastTx || res.Units != 50000 {
			t.Fatalf("resume with the kept payment: %v %+v\n%s", err, res, strings.Join(*lines, "\n"))
		}
		for _, l := range *lines {
			if strings.Contains(l, "402") || strings.Contains(l, "pay: signed") {
				t.Fatalf("the resume paid again: %s", l)
			}
		}
	})
	t.Run("spend_cap_signs_nothing", func(t *testing.T) {
		s := newContractServer(t, 0, 0)
		cl, _ := s.client(seedKey(7))
		cl.MaxSpendUnits = 49999
		_, err := cl.Audit(context.Background(), body)
		var ce *Error
		if !errors.As(err, &ce) || ce.Kind != KindSpendCap || len(s.exported) != 1 {
			t.Fatalf("err %v, requests %d", err, len(s.exported))
		}
	})
}

// criteriaPrice is the price the embedded criteria publish, as the server reads it.
func criteriaPrice(t *testing.T) x402.Price {
	t.Helper()
	ps, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	pr := ps.Criteria().Price
	return x402.Price{Units: uint64(pr.USDCUnitsPerCall), Label: pr.Label, Status: pr.Status}
}
