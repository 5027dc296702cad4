package siwx

import (
	"sync"
	"time"
)

// Budget limits, per key (a client address or a payer wallet), how many challenges and failed
// proofs one replica answers in a window. It is in memory on purpose: it protects this replica's
// work and the fee payer, and a restart forgets it. Keys are held only for the current window.
type Budget struct {
	// PerWindow is the allowance per key (30 by default); Window is its length (a minute).
	PerWindow int
	Window    time.Duration
	Now       func() time.Time

	mu    sync.Mutex
	start time.Time
	used  map[string]int
}

// DefaultPerMinute is the default allowance of challenges and failed attempts per client address.
const DefaultPerMinute = 30

// NewBudget returns a budget of perWindow per window (DefaultPerMinute a minute when 0).
func NewBudget(perWindow int, window time.Duration, now func() time.Time) *Budget {
	if perWindow <= 0 {
		perWindow = DefaultPerMinute
	}
	if window <= 0 {
		window = time.Minute
	}
	if now == nil {
		now = time.Now
	}
	return &Budget{PerWindow: perWindow, Window: window, Now: now, used: map[string]int{}}
}

// Take spends one unit of key's allowance; false means the allowance of this window is used up
// and retry is how long until the next window.
func (b *Budget) Take(key string) (ok bool, retry time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.Now()
	if now.Sub(b.start) >= b.Window || now.Before(b.start) {
		b.start, b.used = now, map[string]int{}
	}
	if b.used[key] >= b.PerWindow {
		return false, b.start.Add(b.Window).Sub(now)
	}
	b.used[key]++
	return true, 0
}
