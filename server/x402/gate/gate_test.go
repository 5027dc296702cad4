package gate_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	solana "github.com/gagliardetto/solana-go"

	scopehygiene "github.com/scopehygiene/scope-hygiene"
	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/apidoc"
	"github.com/scopehygiene/scope-hygiene/server/engine"
	"github.com/scopehygiene/scope-hygiene/server/internal/schematest"
	"github.com/scopehygiene/scope-hygiene/server/metrics"
	"github.com/scopehygiene/scope-hygiene/server/sign"
	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/store/sqlite"
	"github.com/scopehygiene/scope-hygiene/server/x402"
	"github.com/scopehygiene/scope-hygiene/server/x402/gate"
)

const exportBody = `{"family":"mem0","form":"full_text","records":[{"id":"r1","content_text":"likes tea","user_id":"alice"}]}`

// rig is an API server with the x402 gate on devnet, over a given criteria program set.
type rig struct {
	t    testing.TB
	srv  *api.Server
	gate *gate.Gate
	ps   *rules.ProgramSet
	st   store.Store
}

type httptestRecorder = httptest.ResponseRecorder

// newRigStore is a rig on the serving criteria over a given settlement store.
func newRigStore(t *testing.T, ss x402.SettlementStore) *rig {
	t.Helper()
	return newRigWith(t, priced(t, "50000", "$0.05"), "", ss, nil)
}

func newRig(t *testing.T, ps *rules.ProgramSet, publicBase string) *rig {
	t.Helper()
	return newRigWith(t, ps, publicBase, x402.NewMemStore(), nil)
}

func newRigWith(t *testing.T, ps *rules.ProgramSet, publicBase string, ss x402.SettlementStore, rpc x402.RPC) *rig {
	t.Helper()
	return newRigConfig(t, ps, publicBase, ss, rpc, nil)
}

// newRigConfig is newRigWith with the API configuration changed by mod (when not nil).
func newRigConfig(t *testing.T, ps *rules.ProgramSet, publicBase string, ss x402.SettlementStore, rpc x402.RPC, mod func(*api.Config)) *rig {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	pr := ps.Criteria().Price
	fee := solana.PrivateKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32)))
	payTo := solana.PrivateKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, 32))).PublicKey()
	cfg := &x402.Config{Network: x402.Devnet, RPCURL: "http://127.0.0.1:1", FeePayer: fee, PayTo: payTo,
		ChallengeKey: bytes.Repeat([]byte{9}, 32),
		Price:        x402.Price{Units: uint64(pr.USDCUnitsPerCall), Label: pr.Label, Status: pr.Status}}
	now := func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }
	if rpc == nil {
		rpc = x402.NewSolanaRPC(cfg.RPCURL)
	}
	g, err := gate.New(cfg, rpc, ss, nil, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := engine.Document(ps)
	if err != nil {
		t.Fatal(err)
	}
	ac := api.Config{Criteria: ps, Document: doc, Engine: engine.Engine{PS: ps}, Store: st,
		Signer: sign.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))), Payments: g,
		PriceStatus: pr.Status, PublicBaseURL: publicBase, Metrics: metrics.New(), Now: now}
	if mod != nil {
		mod(&ac)
	}
	srv, err := api.New(ac)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, srv: srv, gate: g, ps: ps, st: st}
}

func (r *rig) do(method, path, body string, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "audit.test"
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	r.srv.Handler().ServeHTTP(rec, req)
	apidoc.CheckT(r.t, req, rec.Code, rec.Header(), rec.Body.Bytes()) // every answer against schema/openapi.json
	return rec
}

// priced is the serving criteria with the price block changed (units, label; status kept).
func priced(t *testing.T, units, label string) *rules.ProgramSet {
	t.Helper()
	src := string(scopehygiene.CriteriaYAML)
	block := "price:\n  usdc_units_per_call: 50000\n  label: \"$0.05\"\n"
	if !strings.Contains(src, block) {
		t.Fatal("criteria.yaml price block not found in its published form")
	}
	src = strings.Replace(src, block, "price:\n  usdc_units_per_call: "+units+"\n  label: \""+label+"\"\n", 1)
	ps, err := rules.Load("criteria-copy.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// TestPriceComesFromCriteria: a price revision in a copy of the criteria is what the 402 body,
// PAYMENT-REQUIRED (amount and extra.price) and GET /criteria state, with its status.
func TestPriceComesFromCriteria(t *testing.T) {
	for _, tc := range []struct{ units, label string }{{"50000", "$0.05"}, {"70000", "$0.07"}} {
		t.Run(tc.units, func(t *testing.T) {
			r := newRig(t, priced(t, tc.units, tc.label), "https://audit.example.com")
			status := r.ps.Criteria().Price.Status
			if status != "RULED" {
				t.Fatalf("criteria price status %q, want RULED", status)
			}
			rec := r.do(http.MethodPost, "/audit", exportBody, nil)
			if rec.Code != http.StatusPaymentRequired {
				t.Fatalf("status %d, want 402: %s", rec.Code, rec.Body)
			}
			schematest.Check(t, "payment-required", "", rec.Body.Bytes())
			var body struct {
				Price struct {
					USDCUnits     json.Number `json:"usdc_units"`
					Label, Status string
				}
				Network  string
				Resource struct{ URL string }
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if body.Price.USDCUnits.String() != tc.units || body.Price.Label != tc.label || body.Price.Status != "RULED" {
				t.Errorf("402 body price = %+v, want %s %s RULED", body.Price, tc.units, tc.label)
			}
			if body.Network != x402.Devnet.CAIP2 {
				t.Errorf("402 body network = %q, want devnet", body.Network)
			}
			if body.Resource.URL != "https://audit.example.com/audit" {
				t.Errorf("resource.url = %q, want the absolute public URL", body.Resource.URL)
			}
			pr, err := x402.DecodePaymentRequired(rec.Header().Get(x402.HeaderPaymentRequired))
			if err != nil {
				t.Fatal(err)
			}
			hb, _ := json.Marshal(pr)
			schematest.Check(t, "payment-required", "/$defs/header", hb)
			a := pr.Accepts[0]
			if a.Amount != tc.units || a.Extra.Price == nil || a.Extra.Price.Label != tc.label || a.Extra.Price.Status != "RULED" {
				t.Errorf("PAYMENT-REQUIRED accepts[0] amount %s extra.price %+v, want %s %s RULED", a.Amount, a.Extra.Price, tc.units, tc.label)
			}
			if pr.Resource.URL != "https://audit.example.com/audit" {
				t.Errorf("PAYMENT-REQUIRED resource.url = %q", pr.Resource.URL)
			}
			crit := r.do(http.MethodGet, "/criteria", "", nil)
			var doc struct {
				Price struct {
					USDCUnitsPerCall json.Number `json:"usdc_units_per_call"`
					Label, Status    string
				}
				Payments struct {
					Price struct {
						USDCUnits     json.Number `json:"usdc_units"`
						Label, Status string
					}
					Network struct {
						ChainID string `json:"chain_id"`
						Name    string
						Revenue bool
					}
				}
			}
			if err := json.Unmarshal(crit.Body.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Price.USDCUnitsPerCall.String() != tc.units || doc.Price.Label != tc.label || doc.Price.Status != "RULED" ||
				doc.Payments.Price.USDCUnits.String() != tc.units || doc.Payments.Price.Status != "RULED" {
				t.Errorf("/criteria price %+v payments.price %+v, want %s %s RULED", doc.Price, doc.Payments.Price, tc.units, tc.label)
			}
			if doc.Payments.Network.ChainID != x402.Devnet.CAIP2 || doc.Payments.Network.Name != "devnet" || doc.Payments.Network.Revenue {
				t.Errorf("/criteria payments.network = %+v, want devnet, not revenue", doc.Payments.Network)
			}
		})
	}
}

// TestResourceURLFromHost: without a configured public base URL the resource URL is still
// absolute, built from the request's Host.
func TestResourceURLFromHost(t *testing.T) {
	r := newRig(t, priced(t, "50000", "$0.05"), "")
	rec := r.do(http.MethodPost, "/audit", exportBody, nil)
	pr, err := x402.DecodePaymentRequired(rec.Header().Get(x402.HeaderPaymentRequired))
	if err != nil {
		t.Fatal(err)
	}
	if pr.Resource.URL != "http://audit.test/audit" {
		t.Errorf("resource.url = %q, want http://audit.test/audit", pr.Resource.URL)
	}
}

// TestMalformedPaymentHeader: a PAYMENT-SIGNATURE that is not base64 JSON is a 400 with a
// static reason (never a 402 inviting another payment); a decodable but wrong one is a 402.
func TestMalformedPaymentHeader(t *testing.T) {
	r := newRig(t, priced(t, "50000", "$0.05"), "")
	canary := "CANARY-" + strings.Repeat("z", 20)
	for _, tc := range []struct {
		name, hdr string
		want      int
	}{
		{"not_base64", "%%%" + canary, http.StatusBadRequest},
		{"base64_not_json", "bm90IGpzb24", http.StatusBadRequest},
		{"over_cap", strings.Repeat("A", x402.MaxHeaderBytes+4), http.StatusBadRequest},
		{"json_wrong_payment", "eyJ4NDAyVmVyc2lvbiI6Mn0=", http.StatusPaymentRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := r.do(http.MethodPost, "/audit", exportBody, map[string]string{x402.HeaderPaymentSignature: tc.hdr})
			if rec.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.want, rec.Body)
			}
			if strings.Contains(rec.Body.String(), canary) {
				t.Error("the header's bytes were echoed")
			}
			if tc.want == http.StatusBadRequest {
				schematest.Check(t, "payment-error", "", rec.Body.Bytes())
				if rec.Header().Get(x402.HeaderPaymentRequired) != "" {
					t.Error("a malformed header got a fresh payment challenge")
				}
			} else {
				schematest.Check(t, "payment-required", "", rec.Body.Bytes())
			}
		})
	}
}
