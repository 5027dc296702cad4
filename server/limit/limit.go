// Package limit holds the service's admission limits: a cap on open connections that sheds
// idle ones first, a cap on in-flight work, and a per-address budget. Past a limit the caller
// gets a fast answer, never a queue.
package limit

import (
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Inflight caps concurrent work without queueing: TryAcquire fails at once when full.
type Inflight struct {
	slots chan struct{}
}

// NewInflight returns a cap of n concurrent holders (n < 1 means 1).
func NewInflight(n int) *Inflight {
	return &Inflight{slots: make(chan struct{}, max(n, 1))}
}

// TryAcquire takes a slot if one is free. A true result must be paired with Release.
func (i *Inflight) TryAcquire() bool {
	select {
	case i.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// Release frees a slot taken by TryAcquire.
func (i *Inflight) Release() { <-i.slots }

// Cap is the number of slots.
func (i *Inflight) Cap() int { return cap(i.slots) }

// Budget is a per-key token bucket: Burst calls at once, refilled at PerMinute. Keys unseen for
// a while are forgotten, so the table stays bounded by the callers of the last few minutes.
type Budget struct {
	mu        sync.Mutex
	perMinute int
	burst     int
	keys      map[string]*bucket
	maxKeys   int
	now       func() time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// NewBudget returns a budget of perMinute calls per key with the given burst; perMinute < 1
// disables it (Allow always answers true). maxKeys bounds the table (at least 1024).
func NewBudget(perMinute, burst, maxKeys int, now func() time.Time) *Budget {
	if now == nil {
		now = time.Now
	}
	return &Budget{perMinute: perMinute, burst: max(burst, 1), keys: map[string]*bucket{}, maxKeys: max(maxKeys, 1024), now: now}
}

// Allow spends one call of key's budget. When it is spent, Allow answers false and how long
// until the next call is allowed.
func (b *Budget) Allow(key string) (bool, time.Duration) {
	if b == nil || b.perMinute < 1 {
		return true, 0
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.keys[key]
	if !ok {
		if len(b.keys) >= b.maxKeys {
			b.sweep(now)
		}
		k = &bucket{lim: rate.NewLimiter(rate.Limit(float64(b.perMinute)/60), b.burst)}
		b.keys[key] = k
	}
	k.seen = now
	r := k.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// sweep forgets keys whose bucket has refilled (they are indistinguishable from new keys); if
// none has, it forgets every key (the table never grows past maxKeys).
func (b *Budget) sweep(now time.Time) {
	full := time.Duration(float64(b.burst) / float64(b.perMinute) * float64(time.Minute))
	for k, v := range b.keys {
		if now.Sub(v.seen) >= full {
			delete(b.keys, k)
		}
	}
	if len(b.keys) >= b.maxKeys {
		clear(b.keys)
	}
}

// Spent reports, without spending, whether key's budget is spent and how long until its next
// call is allowed.
func (b *Budget) Spent(key string) (bool, time.Duration) {
	if b == nil || b.perMinute < 1 {
		return false, 0
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.keys[key]
	if !ok || k.lim.TokensAt(now) >= 1 {
		return false, 0
	}
	r := k.lim.ReserveN(now, 1)
	d := r.DelayFrom(now)
	r.CancelAt(now)
	return true, d
}

// Bytes is a budget of bytes held at once across all requests (the request bodies being read or
// evaluated). Take fails at once when it would pass the budget: the caller sheds, never waits.
type Bytes struct {
	max  int64
	held atomic.Int64
	// refused is the time (UnixNano) of the last refusal.
	refused atomic.Int64
}

// NewBytes returns a budget of max bytes (max < 1 means no budget: Take always succeeds).
func NewBytes(max int64) *Bytes { return &Bytes{max: max} }

// Take holds n more bytes; false (and nothing held) when that would pass the budget.
func (b *Bytes) Take(n int64) bool {
	if b.max < 1 {
		return true
	}
	if b.held.Add(n) > b.max {
		b.held.Add(-n)
		b.refused.Store(time.Now().UnixNano())
		return false
	}
	return true
}

// Give releases n bytes taken by Take.
func (b *Bytes) Give(n int64) {
	if b.max >= 1 {
		b.held.Add(-n)
	}
}

// Held is the number of bytes held now.
func (b *Bytes) Held() int64 { return b.held.Load() }

// Max is the budget (0: none).
func (b *Bytes) Max() int64 { return max(b.max, 0) }

// Full reports whether the budget is spent.
func (b *Bytes) Full() bool { return b.max >= 1 && b.held.Load() >= b.max }

// Admit reports whether a new body may start (the budget is not spent); a refusal is noted.
func (b *Bytes) Admit() bool {
	if b.Full() {
		b.refused.Store(time.Now().UnixNano())
		return false
	}
	return true
}

// RefusedWithin reports whether a body was refused within d.
func (b *Bytes) RefusedWithin(d time.Duration) bool {
	t := b.refused.Load()
	return t != 0 && time.Since(time.Unix(0, t)) < d
}
