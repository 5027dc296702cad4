package mcp_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/mcp"
	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/store/sqlite"
)

// cutStore commits a house audit's ledger row and then reports a cut connection, with its
// look-ups failing too, while cut is set: the outcome is unknown to the service.
type cutStore struct {
	*sqlite.Store
	cut atomic.Bool
}

var errCut = errors.New("connection reset after the commit")

func (c *cutStore) AppendLedgerOnce(ctx context.Context, e store.LedgerEntry, wk store.WriteKey, now time.Time) (int64, bool, error) {
	id, replayed, err := c.Store.AppendLedgerOnce(ctx, e, wk, now)
	if err == nil && c.cut.Load() {
		return 0, false, errCut
	}
	return id, replayed, err
}

func (c *cutStore) FindWrite(ctx context.Context, wk store.WriteKey, now time.Time) (store.Replay, error) {
	if c.cut.Load() {
		return store.Replay{}, errCut
	}
	return c.Store.FindWrite(ctx, wk, now)
}

func (r *rig) ledgerRows() int {
	r.t.Helper()
	rows, err := r.st.ListLedger(context.Background(), 0, 100)
	if err != nil {
		r.t.Fatal(err)
	}
	return len(rows)
}

// TestIdempotencyKeyPassesThrough: a consuming write made through /mcp uses the Idempotency-Key
// of the MCP HTTP request (docs/api.md, Idempotent writes). A free pre-check retried with its key
// is answered again without a second free use, while another key is a new use (429 within the
// interval); a house audit retried with its key writes one ledger row; and a house audit whose
// outcome is unknown hands back its minted key in _meta, with which the retry writes nothing.
func TestIdempotencyKeyPassesThrough(t *testing.T) {
	var cs *cutStore
	r := newRig(t, func(c *api.Config) {
		cs = &cutStore{Store: c.Store.(*sqlite.Store)}
		c.Store = cs
	})
	keyed := r.session(map[string]string{api.HeaderIdempotencyKey: "mcp-order-42"})
	for i := range 2 {
		if res := call(t, keyed, mcp.ToolPrecheck, exportArgs(exportBody), nil); res.IsError {
			t.Fatalf("pre-check %d with the key: %v %s", i+1, res.Meta, structured(t, res))
		}
	}
	other := call(t, r.session(map[string]string{api.HeaderIdempotencyKey: "mcp-order-43"}), mcp.ToolPrecheck, exportArgs(exportBody), nil)
	if !other.IsError || other.Meta[mcp.MetaHTTPStatus] != float64(429) {
		t.Fatalf("a pre-check with another key: isError %v meta %v, want 429 (a new free use)", other.IsError, other.Meta)
	}

	house := map[string]string{"Authorization": "Bearer " + houseToken, api.HeaderIdempotencyKey: "mcp-house-7"}
	for i := range 2 {
		if res := call(t, r.session(house), mcp.ToolAudit, exportArgs(exportBody), nil); res.IsError {
			t.Fatalf("house audit %d with the key: %v %s", i+1, res.Meta, structured(t, res))
		}
	}
	if n := r.ledgerRows(); n != 1 {
		t.Fatalf("a house audit retried with its key: %d ledger rows, want 1", n)
	}

	cs.cut.Store(true)
	unknown := call(t, r.session(map[string]string{"Authorization": "Bearer " + houseToken}), mcp.ToolAudit, exportArgs(exportBody), nil)
	key, _ := unknown.Meta[mcp.MetaIdempotencyKey].(string)
	if !unknown.IsError || unknown.Meta[mcp.MetaHTTPStatus] != float64(503) || len(key) != 32 {
		t.Fatalf("a house audit cut after its commit: isError %v meta %v, want 503 with the minted key", unknown.IsError, unknown.Meta)
	}
	validate(t, "service-limit.schema.json", structured(t, unknown))
	cs.cut.Store(false)
	retry := call(t, r.session(map[string]string{"Authorization": "Bearer " + houseToken, api.HeaderIdempotencyKey: key}), mcp.ToolAudit, exportArgs(exportBody), nil)
	if retry.IsError {
		t.Fatalf("the retry with the handed-back key: %v %s", retry.Meta, structured(t, retry))
	}
	if n := r.ledgerRows(); n != 2 {
		t.Fatalf("after the unknown outcome and its retry: %d ledger rows, want 2", n)
	}
}
