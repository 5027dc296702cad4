package mcp_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/api"
)

// precheckEnvelope is a tools/call of precheck as a host sends it.
const precheckEnvelope = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"precheck","arguments":{"export":` + exportBody + `}}}`

// TestEnvelopeCutByTheBodyBudget: an envelope that passes the body budget while it arrives is
// answered as every POST route answers it: 503 overloaded with Retry-After.
func TestEnvelopeCutByTheBodyBudget(t *testing.T) {
	r := newRig(t, func(c *api.Config) { c.BodyBudgetBytes = 64 })
	a := post(t, r.url, precheckEnvelope)
	if a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") == "" || string(a.body) != `{"error":"overloaded","kind":"error"}`+"\n" {
		t.Fatalf("an envelope past the body budget: %d Retry-After %q %s", a.status, a.header.Get("Retry-After"), a.body)
	}
	validate(t, "service-limit.schema.json", a.body)
	if logs := r.logs.String(); !strings.Contains(logs, `"rule":"body_budget"`) {
		t.Errorf("the shed envelope is not logged with its rule:\n%s", logs)
	}
}

// TestEnvelopeCutByTheBodyTimeout: an envelope that does not arrive within the body timeout is
// answered as every POST route answers it: 408 request body too slow, and the connection closes.
func TestEnvelopeCutByTheBodyTimeout(t *testing.T) {
	r := newRig(t, func(c *api.Config) { c.BodyTimeout = 300 * time.Millisecond })
	ts := httptest.NewServer(r.srv.Handler()) // a real connection: the rig's recorder has no read deadline
	defer ts.Close()
	c, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
		len(precheckEnvelope), precheckEnvelope[:20])
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a stalled envelope: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || string(b) != `{"error":"request body too slow","kind":"error"}`+"\n" || time.Since(start) > 3*time.Second {
		t.Fatalf("a stalled envelope: %d %s after %s", resp.StatusCode, b, time.Since(start))
	}
	validate(t, "service-limit.schema.json", b)
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the connection stayed open after the 408")
	}
	// An envelope that arrives in time is unaffected.
	if a := post(t, ts.URL+"/mcp", precheckEnvelope); a.status != http.StatusOK {
		t.Fatalf("an envelope in time: %d %s", a.status, a.body)
	}
}
