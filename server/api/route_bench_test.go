package api_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/gen"
	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/engine"
	"github.com/scopehygiene/scope-hygiene/server/metrics"
	"github.com/scopehygiene/scope-hygiene/server/sign"
	"github.com/scopehygiene/scope-hygiene/server/store/sqlite"
)

// BenchmarkAuditRoute is the request path of a house audit without the network: POST /audit of
// the max-size exports in turn, through the server's handler into a SQLite ledger. Its
// allocations per audit, against the engine's own, are what the server adds to the collector's
// pace; run it under callgrind for the instructions an audit costs.
//
//	go test ./server/api -run '^$' -bench AuditRoute -benchmem
func BenchmarkAuditRoute(b *testing.B) {
	ps, err := rules.Default()
	if err != nil {
		b.Fatal(err)
	}
	doc, err := engine.Document(ps)
	if err != nil {
		b.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "db.sqlite"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	srv, err := api.New(api.Config{Criteria: ps, Document: doc, Engine: engine.Engine{PS: ps}, Store: st,
		Signer:      sign.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))),
		PriceStatus: ps.Criteria().Price.Status, HouseToken: houseToken, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Metrics: metrics.New(), Now: func() time.Time { return now }, ProofKey: bytes.Repeat([]byte{5}, 32)})
	if err != nil {
		b.Fatal(err)
	}
	var bodies [][]byte
	for _, f := range gen.MaxSizeFamilies {
		bodies = append(bodies, gen.MaxSizeExport(f))
	}
	h := srv.Handler()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodPost, "/audit", bytes.NewReader(bodies[i%len(bodies)]))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+houseToken)
		w := &discardWriter{h: http.Header{}}
		h.ServeHTTP(w, req)
		if w.code != http.StatusOK {
			b.Fatalf("audit %d: status %d", i, w.code)
		}
	}
}

// discardWriter is a ResponseWriter that keeps the status only: a recorder's growing buffer
// would count as the server's allocations.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(p), nil
}
