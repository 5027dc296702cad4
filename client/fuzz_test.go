package client

import (
	"encoding/base64"
	"testing"
)

// The client parses what a service sends (PAYMENT-REQUIRED, PAYMENT-RESPONSE, sign-in-with-x
// challenges, 202 bodies, refusal bodies) and what its caller types (-fail-on). None may panic,
// and none may echo input that is not an identifier.

func FuzzServerHeaders(f *testing.F) {
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepts":[{"scheme":"exact","network":"solana:x","amount":"50000","asset":"a","payTo":"b","maxTimeoutSeconds":60,"extra":{"feePayer":"c","memo":"m"}}]}`)),
		[]byte(`{"error":"caller_unproven","extensions":{"sign-in-with-x":{"info":{"nonce":"n","domain":"d","uri":"u","version":"1","issuedAt":"t"},"supportedChains":[{"chainId":"solana:x","type":"ed25519"}]}}}`))
	f.Add("e30=", []byte(`{"kind":"refusal","rule":"R-4"}`))
	f.Add("!!", []byte(`{"status":"pending","transaction":"t","resume":{"sign-in-with-x":null}}`))
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		var pr PaymentRequired
		if decodeHeader(header, &pr) == nil {
			if o, err := PickOffer(&pr); err == nil {
				_ = o.extraString("feePayer")
				_ = o.extraString("memo")
			}
		}
		var sr SettlementResponse
		_ = decodeHeader(header, &sr)
		if ch, err := challengeFrom(header, body); err == nil {
			if h, err := Prove(ch, seedKey(1)); err == nil && h == "" {
				t.Fatal("empty proof header")
			}
		}
		e := refusal(&answer{status: 400, body: body}, "/x")
		if e.Rule != "" && !staticToken(e.Rule) {
			t.Fatalf("a non-identifier rule reached the error: %q", e.Rule)
		}
		_ = callerOf(body)
	})
}

func FuzzGate(f *testing.F) {
	f.Add("undeclared>0", []byte(`{"factors":{"cross_scope_clusters":{"status":"ASSESSABLE","undeclared":1}}}`))
	f.Add("unscoped_rate>=0.05", []byte(`{"factors":{"unscoped_rate":{"status":"ASSESSABLE","rate":{"numerator":1,"denominator":0}}}}`))
	f.Add("duplicates.rate.numerator<3", []byte(`{"factors":{"duplicates":{"status":"NOT ASSESSABLE"}}}`))
	f.Fuzz(func(t *testing.T, gate string, report []byte) {
		g, err := ParseGate(gate)
		if err != nil {
			return
		}
		_, _ = g.Check(report)
	})
}
