package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/scopehygiene/scope-hygiene/server/api"
)

// Canaries: content canaries must appear on no surface at all (reports included); id and scope
// canaries may appear only inside a successful audit report, which lists record ids and scopes.
const (
	canaryContent  = "CANARYcontent9f1c"
	canaryMeta     = "CANARYmeta5b2e"
	canarySource   = "CANARYsource77ad"
	canaryHash     = "CANARYhash03be"
	canaryManifest = "CANARYmanifest4c1d"
	canaryID       = "CANARYid6e0f"
	canaryScope    = "CANARYscope2a9b"
	canaryPath     = "CANARYpath11fe"
)

var contentCanaries = []string{canaryContent, canaryMeta, canarySource, canaryHash, canaryManifest, canaryPath}
var reportCanaries = []string{canaryID, canaryScope}

// canaryExport plants a canary in every content field, scope value, metadata, source and id.
func canaryExport(form string, broken bool) []byte {
	var recs []any
	for i, scope := range []string{canaryScope + "-a", canaryScope + "-b", canaryScope + "-a"} {
		r := map[string]any{
			"id":               canaryID + "-" + string(rune('0'+i)),
			"user_id":          scope,
			"agent_id":         canaryScope + "-agent",
			"source":           canarySource,
			"metadata":         map[string]any{"note": canaryMeta, "shared": false},
			"attributed_scope": canaryScope + "-x",
			"origin_scope":     canaryScope,
			"supersedes":       canaryID + "-missing",
		}
		if form == "hash_only" {
			r["content_hash"] = canaryHash
		} else {
			r["content_text"] = canaryContent + " shared text"
		}
		recs = append(recs, r)
	}
	if broken {
		recs = append(recs, map[string]any{"id": canaryID + "-bad", "content_text": 42, "metadata": canaryMeta})
	}
	m := map[string]any{"family": "mem0", "form": form, "records": recs,
		"manifest": map[string]any{"global_content_keys": []any{canaryManifest}, "private_scopes": []any{canaryScope + "-p"},
			"global_claim_ids": []any{canaryID + "-claim"}}}
	b, _ := json.Marshal(m)
	return b
}

type exchange struct {
	name   string
	report bool // a successful audit report: ids and scopes allowed
	resp   response
}

func TestNothingRetained(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			pay := &fakePayments{}
			var panicky bool
			h := newHarness(t, be.open(t), func(c *api.Config) {
				c.Payments = pay
				real := c.Engine
				c.Engine = switchEngine{real: real, panicky: &panicky}
			})
			var got []exchange
			send := func(name, method, path string, body []byte, hdr map[string]string, report bool) response {
				r := h.do(method, path, body, hdr)
				got = append(got, exchange{name, report && r.Status == 200, r})
				return r
			}
			house := map[string]string{"Authorization": "Bearer " + houseToken}
			big := bytes.Repeat([]byte(canaryContent), h.ps.BodyCap()/len(canaryContent)+2)
			perDay, interval := h.ps.FreeTier()
			for _, form := range []string{"full_text", "hash_only"} {
				good, bad := canaryExport(form, false), canaryExport(form, true)
				h.clock.Advance(interval)
				if r := send("precheck "+form, "POST", "/precheck", good, nil, false); r.Status != 200 {
					t.Fatalf("precheck %s: %d %s", form, r.Status, r.Body)
				}
				send("precheck 429 "+form, "POST", "/precheck", good, nil, false)
				send("precheck malformed "+form, "POST", "/precheck", bad, map[string]string{"X-Forwarded-For": canaryScope}, false)
				send("audit malformed "+form, "POST", "/audit", bad, nil, false)
				send("audit 402 "+form, "POST", "/audit", good, nil, false)
				if r := send("audit house "+form, "POST", "/audit", good, house, true); r.Status != 200 {
					t.Fatalf("house audit %s: %d %s", form, r.Status, r.Body)
				}
				if r := send("audit paid "+form, "POST", "/audit", good, map[string]string{"X-Test-Paid": "1"}, true); r.Status != 200 {
					t.Fatalf("paid audit %s: %d %s", form, r.Status, r.Body)
				}
				send("audit bad token "+form, "POST", "/audit", good, map[string]string{"Authorization": "Bearer " + canaryID}, false)
				panicky = true
				if r := send("audit panic "+form, "POST", "/audit", good, house, false); r.Status != 500 {
					t.Fatalf("panic: %d", r.Status)
				}
				panicky = false
			}
			send("caller invalid", "POST", "/precheck", []byte(`{"caller":"`+canaryID+`"}`), nil, false)
			send("over cap", "POST", "/audit", big, nil, false)
			send("over cap chunked", "POST", "/precheck", big, map[string]string{"X-Chunked": "1"}, false)
			send("not covered", "POST", "/"+canaryPath, canaryExport("full_text", false), nil, false)
			send("unknown get", "GET", "/"+canaryPath+"?q="+canaryScope, nil, nil, false)
			// Exhaust the daily allowance for the 402 path.
			body := canaryExport("full_text", false)
			for i := 0; i <= perDay; i++ {
				h.clock.Advance(interval)
				r := send("precheck loop", "POST", "/precheck", body, map[string]string{}, false)
				if i == perDay && r.Status != http.StatusPaymentRequired {
					t.Fatalf("allowance not exhausted: %d", r.Status)
				}
			}
			send("metrics", "GET", "/metrics", nil, nil, false)

			check := func(surface, text string, canaries []string) {
				for _, c := range canaries {
					if strings.Contains(text, c) {
						t.Errorf("%s carries canary %s", surface, c)
					}
				}
			}
			all := append(append([]string{}, contentCanaries...), reportCanaries...)
			for _, x := range got {
				text := string(x.resp.Body) + headerText(x.resp.Header)
				if x.report {
					check("response "+x.name, text, contentCanaries)
					if !strings.Contains(text, canaryID) {
						t.Errorf("%s: the report should list record ids (canary test is not exercising reports)", x.name)
					}
				} else {
					check("response "+x.name, text, all)
				}
			}
			check("logs", h.logs.String(), all)
			check("metrics", h.metricsText(), all)
			ctx := context.Background()
			tables, err := h.st.Tables(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rowsSeen := 0
			for _, tb := range tables {
				rows, err := h.st.DumpTable(ctx, tb)
				if err != nil {
					t.Fatal(err)
				}
				rowsSeen += len(rows)
				check("table "+tb, strings.Join(rows, "\n"), all)
			}
			if rowsSeen == 0 {
				t.Fatal("no stored rows to search")
			}
		})
	}
}

func headerText(h http.Header) string {
	var b strings.Builder
	for k, vs := range h {
		b.WriteString(k + ": " + strings.Join(vs, ",") + "\n")
	}
	return b.String()
}
