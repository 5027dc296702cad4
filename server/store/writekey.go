package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"
)

// Idempotent writes. A write that consumes something (a free-tier use, a house audit's ledger
// row) carries a WriteKey, stored in the same transaction as the write, so that after a
// connection cut the service can look the key up and answer as committed instead of guessing. A
// paid audit's key is its payment transaction, which the ledger itself holds (one row per
// payment); keys of other writes live in write_keys until KeyLifetime has passed, then the
// sweeper deletes them.

// WriteKey is the stored form of an idempotency key: a digest of what the key is for, its scope
// and the caller's or server's key text, so the table holds no caller text.
type WriteKey string

// Write kinds a key is formed for.
const (
	WriteFree  = "free"
	WriteHouse = "house"
)

// NewWriteKey forms the stored key of one write of kind, within scope (the free-tier caller key
// of a free use, the criteria id of a house audit), from the key text the request carries or
// the server minted.
func NewWriteKey(kind, scope, text string) WriteKey {
	sum := sha256.Sum256([]byte("scope-hygiene/write-key\x00" + kind + "\x00" + scope + "\x00" + text))
	return WriteKey(hex.EncodeToString(sum[:]))
}

// KeyLifetime is how long a write key answers a retry; MaxReplays is how many retries it
// answers as the committed write. Past either, the key is spent and a call carrying it is a new
// call (docs/api.md, Idempotent writes).
const (
	KeyLifetime = 10 * time.Minute
	MaxReplays  = 3
)

// Replay is what a write key found: the committed write it stands for.
type Replay struct {
	// LedgerID is the ledger row of a house audit (0 for a free-tier use).
	LedgerID int64
	// Used is the free-tier count after the use (0 for a house audit).
	Used int
}

// ErrNotApplied marks a write error after which nothing was committed: the transaction failed
// before its commit was sent. Any other write error may hide a commit (the connection was cut
// after the commit was sent, or the commit's sync failed): look the key up before answering.
var ErrNotApplied = errors.New("store: nothing was committed")

// NotApplied wraps err as a write that committed nothing.
func NotApplied(err error) error {
	if err == nil {
		return nil
	}
	return notApplied{err}
}

type notApplied struct{ err error }

func (e notApplied) Error() string        { return e.err.Error() }
func (e notApplied) Unwrap() []error      { return []error{e.err, ErrNotApplied} }
func (e notApplied) Is(target error) bool { return target == ErrNotApplied }

// ErrNotDurable marks a write error after which the write may be visible to this process and yet
// not on disk (SQLite's commit whose sync failed): a look-up cannot tell, so the answer is that
// the outcome is unknown. A retry with the key is answered as committed only after a commit of
// its own has been synced.
var ErrNotDurable = errors.New("store: the write may be visible and not durable")

// NotDurable wraps err as a write whose durability is unknown.
func NotDurable(err error) error {
	if err == nil {
		return nil
	}
	return notDurable{err}
}

type notDurable struct{ err error }

func (e notDurable) Error() string        { return e.err.Error() }
func (e notDurable) Unwrap() []error      { return []error{e.err, ErrNotDurable} }
func (e notDurable) Is(target error) bool { return target == ErrNotDurable }

// Keyed is implemented by every backend: the idempotent forms of the consuming writes and the
// look-ups that answer "did it commit?" after a failed write.
type Keyed interface {
	// TakeFreeOnce is TakeFree under a write key: when wk already stands for a committed use
	// (within KeyLifetime and MaxReplays) it answers that use, allowed and Replayed, consuming
	// nothing; otherwise it decides as TakeFree and stores wk with an allowed use, in one
	// transaction. wk "" is TakeFree.
	TakeFreeOnce(ctx context.Context, key string, wk WriteKey, now time.Time, limits FreeLimits) (FreeDecision, error)
	// AppendLedgerOnce is AppendLedger under a write key (a house audit): when wk already stands
	// for a committed row it returns that row's id and replayed, writing nothing; otherwise it
	// writes the row and wk in one transaction. wk "" is AppendLedger.
	AppendLedgerOnce(ctx context.Context, e LedgerEntry, wk WriteKey, now time.Time) (id int64, replayed bool, err error)
	// FindWrite reports the committed write wk stands for, or ErrNotFound. It neither counts a
	// replay nor changes anything.
	FindWrite(ctx context.Context, wk WriteKey, now time.Time) (Replay, error)
	// FindPayment returns the id of the ledger row of payment transaction tx, or ErrNotFound.
	FindPayment(ctx context.Context, tx string) (int64, error)
	// ProbeWrite commits one small write (the readiness probe's row) and reports the error.
	ProbeWrite(ctx context.Context, now time.Time) error
}
