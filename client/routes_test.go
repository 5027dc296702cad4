package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A rule set's routes come from GET /criteria/index; the zero Routes are the primary criteria's.
func TestRoutesFromIndex(t *testing.T) {
	var hit []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit = append(hit, r.Method+" "+r.URL.Path)
		switch r.URL.Path {
		case "/criteria/index":
			w.Write([]byte(`{"kind":"criteria_index","criteria":[` +
				`{"criteria_id":"a/v1","document":"/criteria/a/v1","precheck":"/precheck","audit":"/audit","price":{"usdc_units":50000,"label":"$0.05","status":"RULED"}},` +
				`{"criteria_id":"b/v1","document":"/criteria/b/v1","precheck":"/v1/b/precheck","audit":"/v1/b/audit","price":{"usdc_units":0,"label":"free","status":"UNPRICED"}}]}`))
		case "/v1/b/precheck", "/precheck":
			w.Write([]byte(`{"kind":"precheck_result"}`))
		case "/v1/b/audit":
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"kind":"refusal","rule":"events_empty"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c := &Client{BaseURL: srv.URL}
	idx, err := c.Index(ctx)
	if err != nil || len(idx) != 2 || idx[1].Precheck != "/v1/b/precheck" || idx[1].Price.USDCUnits != 0 || idx[0].Price.USDCUnits != 50000 {
		t.Fatalf("index %+v %v", idx, err)
	}
	if _, err := c.Precheck(ctx, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	c.Routes = idx[1].Routes
	if _, err := c.Precheck(ctx, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	_, err = c.Audit(ctx, []byte(`{}`))
	if e, ok := err.(*Error); !ok || e.Rule != "events_empty" || e.Msg != "client: /v1/b/audit refused" {
		t.Fatalf("audit under b: %v", err)
	}
	if _, _, err := c.Criteria(ctx); err == nil {
		t.Fatal("GET /criteria/b/v1 answered 404 and was taken")
	}
	want := []string{"GET /criteria/index", "POST /precheck", "POST /v1/b/precheck", "POST /v1/b/audit", "GET /criteria/b/v1"}
	if len(hit) != len(want) {
		t.Fatalf("requests %v, want %v", hit, want)
	}
	for i := range want {
		if hit[i] != want[i] {
			t.Fatalf("requests %v, want %v", hit, want)
		}
	}
}
