package freetier

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/scopehygiene/scope-hygiene/server/store"
)

// Key is the store key of a caller: a digest of the wallet, or of the client address when the
// request names no wallet, so the counters table holds neither raw value.
func Key(caller, clientIP string) string {
	var sum [32]byte
	if caller != "" {
		sum = sha256.Sum256([]byte("scope-hygiene/free-tier/wallet\x00" + caller))
	} else {
		sum = sha256.Sum256([]byte("scope-hygiene/free-tier/ip\x00" + clientIP))
	}
	return hex.EncodeToString(sum[:])
}

// KeyIn is Key within one criteria's allowance: a criteria served beside the primary one keeps its
// own counters (scope is its criteria id; "" is the primary criteria, whose key is Key's).
func KeyIn(scope, caller, clientIP string) string {
	if scope == "" {
		return Key(caller, clientIP)
	}
	k := Key(caller, clientIP)
	sum := sha256.Sum256([]byte("scope-hygiene/free-tier/criteria\x00" + scope + "\x00" + k))
	return hex.EncodeToString(sum[:])
}

// Gate takes free calls from the store under the published limits.
type Gate struct {
	Store  store.Store
	Limits store.FreeLimits
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Scope keeps a separate allowance per criteria (KeyIn); "" for the primary criteria.
	Scope string
}

// Take decides one free call for the caller (or, without one, the client address).
func (g *Gate) Take(ctx context.Context, caller, clientIP string) (store.FreeDecision, error) {
	d, err := g.Store.TakeFree(ctx, KeyIn(g.Scope, caller, clientIP), g.now(), g.Limits)
	if err != nil {
		return d, fmt.Errorf("free tier: %w", err)
	}
	return d, nil
}

// WriteKey is the stored key of one free use on route (a pre-check and a free audit are
// different uses) by the caller (or the client address) under the key text the request carries
// or the server minted.
func (g *Gate) WriteKey(route, caller, clientIP, text string) store.WriteKey {
	return store.NewWriteKey(store.WriteFree, route+"\x00"+KeyIn(g.Scope, caller, clientIP), text)
}

// TakeOnce is Take under a write key (store.Keyed.TakeFreeOnce): a retry with the key of a use
// already committed is answered allowed and replayed, consuming nothing. A store without
// idempotent writes decides as Take.
func (g *Gate) TakeOnce(ctx context.Context, caller, clientIP string, wk store.WriteKey) (store.FreeDecision, error) {
	k, ok := g.Store.(store.Keyed)
	if !ok {
		return g.Take(ctx, caller, clientIP)
	}
	d, err := k.TakeFreeOnce(ctx, KeyIn(g.Scope, caller, clientIP), wk, g.now(), g.Limits)
	if err != nil {
		return d, fmt.Errorf("free tier: %w", err)
	}
	return d, nil
}

// Find reports the committed use wk stands for (store.ErrNotFound when none): after a failed
// write, whether the use was counted after all.
func (g *Gate) Find(ctx context.Context, wk store.WriteKey) (store.FreeDecision, error) {
	k, ok := g.Store.(store.Keyed)
	if !ok {
		return store.FreeDecision{}, store.ErrNotFound
	}
	r, err := k.FindWrite(ctx, wk, g.now())
	if err != nil {
		return store.FreeDecision{}, fmt.Errorf("free tier: %w", err)
	}
	return store.FreeDecision{Outcome: store.FreeAllowed, Used: r.Used, Replayed: true}, nil
}

func (g *Gate) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// RetryAfterSeconds is the Retry-After header value for a wait: whole seconds, rounded up, at
// least 1.
func RetryAfterSeconds(wait time.Duration) int {
	s := int((wait + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}
