package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Group commit. A durable commit costs a sync of the disk (SQLite's WAL fsync, PostgreSQL's WAL
// flush), about as long as everything else a write does together. Writes that arrive while a
// commit syncs wait in a queue; when the sync ends, one transaction takes every queued write and
// one commit, with one sync, makes them all durable. No write is answered before that commit
// returns, and nothing but the queue's own short lock is shared between callers: no lock is held
// across a sync.

// Need says what a write's answer needs from the commit of its transaction.
type Need int

const (
	// NeedNothing: the write changed nothing (a refused free call); its answer stands as is.
	NeedNothing Need = iota
	// NeedCount: the write only counted a key's retry; a failed commit consumed nothing.
	NeedCount
	// NeedDurable: the write consumed something; it is answered only once its commit is durable,
	// and a failed commit's error is marked as the backend knows it.
	NeedDurable
)

// WriteFunc makes one write in tx, not yet committed, and says what its answer needs. Its errors
// are the backend's, unmarked; it keeps its results in its closure and may be run again (in a new
// transaction) when another write of its group fails.
type WriteFunc func(ctx context.Context, tx WriteTx) (Need, error)

// Writer runs writes in transactions: one per write (Serial) or many per commit (Group).
type Writer interface {
	// Write runs run in a transaction and commits it; what names the write in errors. The error
	// is marked NotApplied when nothing of this write can have been committed.
	Write(ctx context.Context, what string, run WriteFunc) error
	// AppendLedger writes one ledger row on its own (a write without a key).
	AppendLedger(ctx context.Context, e LedgerEntry) (int64, error)
}

// Serial is the Writer of one transaction per write, over a backend's WriteDB.
type Serial struct{ DB WriteDB }

// Write implements Writer.
func (s Serial) Write(ctx context.Context, what string, run WriteFunc) error {
	tx, err := s.DB.BeginWrite(ctx, what)
	if err != nil {
		return NotApplied(err)
	}
	defer tx.Rollback(ctx)
	need, err := run(ctx, tx)
	switch {
	case err != nil:
		return NotApplied(err)
	case need == NeedNothing:
		return nil // nothing to commit: the rollback ends the transaction
	case need == NeedCount:
		return NotApplied(tx.Commit(ctx, retryCommit))
	}
	return tx.Commit(ctx, what)
}

// AppendLedger implements Writer.
func (s Serial) AppendLedger(ctx context.Context, e LedgerEntry) (int64, error) {
	return s.DB.AppendLedger(ctx, e)
}

// GroupDB is a backend as the group committer sees it.
type GroupDB interface {
	// BeginGroup starts the transaction of one group.
	BeginGroup(ctx context.Context) (WriteTx, error)
	// Isolated reports whether err, returned by one write of a group, belongs to that write
	// alone (a constraint it broke), so that the others can be tried again without it. Any other
	// error (the connection, the disk) fails the whole group.
	Isolated(err error) bool
}

// GroupOptions shape a Group.
type GroupOptions struct {
	// Lanes is how many groups may be open at once (1: one writer, as SQLite is).
	Lanes int
	// MaxWrites bounds the writes of one group; the rest join the next.
	MaxWrites int
	// Timeout bounds one group's transaction (0: none); the callers' own contexts do not, since
	// a group serves many of them.
	Timeout time.Duration
}

// errClosed answers writes queued on, or sent to, a closed Group.
var errClosed = errors.New("store: the store is closed")

// Group is the Writer that commits every queued write in one transaction per lane.
type Group struct {
	db   GroupDB
	opt  GroupOptions
	mu   sync.Mutex
	q    []*groupWrite
	shut bool
	wake chan struct{}
	quit chan struct{}
	wg   sync.WaitGroup
}

// A queued write moves from waiting to taken (a lane runs it) or to dropped (its caller left).
const (
	writeWaiting int32 = iota
	writeTaken
	writeDropped
)

type groupWrite struct {
	what  string
	run   WriteFunc
	state atomic.Int32
	need  Need
	err   error
	done  chan struct{}
}

// NewGroup starts a Group's lanes over db; Close stops them.
func NewGroup(db GroupDB, opt GroupOptions) *Group {
	opt.Lanes = max(opt.Lanes, 1)
	if opt.MaxWrites <= 0 {
		opt.MaxWrites = 64
	}
	g := &Group{db: db, opt: opt, wake: make(chan struct{}, opt.Lanes), quit: make(chan struct{})}
	for range opt.Lanes {
		g.wg.Add(1)
		go g.lane()
	}
	return g
}

// Write implements Writer. A caller whose context ends while its write is queued takes it out:
// nothing of it is written and the error is marked NotApplied. Once a lane has taken it, an
// ended context answers at once with an unmarked error (the group may still commit it).
func (g *Group) Write(ctx context.Context, what string, run WriteFunc) error {
	if err := ctx.Err(); err != nil {
		return NotApplied(err)
	}
	w := &groupWrite{what: what, run: run, done: make(chan struct{})}
	g.mu.Lock()
	if g.shut {
		g.mu.Unlock()
		return NotApplied(errClosed)
	}
	g.q = append(g.q, w)
	g.mu.Unlock()
	select {
	case g.wake <- struct{}{}:
	default: // every lane already has a wake-up pending
	}
	select {
	case <-w.done:
		return w.err
	case <-ctx.Done():
		if w.state.CompareAndSwap(writeWaiting, writeDropped) {
			return NotApplied(ctx.Err())
		}
		select {
		case <-w.done:
			return w.err
		default:
			return errors.Join(errUnknown, ctx.Err())
		}
	}
}

// errUnknown answers a caller that left while its group committed.
var errUnknown = errors.New("store: the caller left while its write's group committed")

// AppendLedger implements Writer: the row is one write of a group.
func (g *Group) AppendLedger(ctx context.Context, e LedgerEntry) (int64, error) {
	var id int64
	err := g.Write(ctx, "ledger append", func(ctx context.Context, tx WriteTx) (Need, error) {
		var err error
		id, err = tx.AppendLedger(ctx, e)
		return NeedDurable, err
	})
	return id, err
}

// Close stops the lanes once their groups are answered and answers every queued write
// NotApplied. The backend is closed after it.
func (g *Group) Close() {
	g.mu.Lock()
	if g.shut {
		g.mu.Unlock()
		return
	}
	g.shut = true
	g.mu.Unlock()
	close(g.quit)
	g.wg.Wait()
	for _, w := range g.take(len(g.q) + 1) {
		w.finish(NotApplied(errClosed))
	}
}

// take moves up to n waiting writes out of the queue, marking them taken; writes whose callers
// left are dropped.
func (g *Group) take(n int) []*groupWrite {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*groupWrite
	i := 0
	for ; i < len(g.q) && len(out) < n; i++ {
		if g.q[i].state.CompareAndSwap(writeWaiting, writeTaken) {
			out = append(out, g.q[i])
		}
	}
	rest := copy(g.q, g.q[i:])
	clear(g.q[rest:])
	g.q = g.q[:rest]
	return out
}

func (w *groupWrite) finish(err error) {
	w.err = err
	close(w.done)
}

// lane runs one group at a time until Close: each time it is free, it takes what is queued.
func (g *Group) lane() {
	defer g.wg.Done()
	for {
		select {
		case <-g.quit:
			return
		case <-g.wake:
		}
		for {
			ws := g.take(g.opt.MaxWrites)
			if len(ws) == 0 {
				break
			}
			g.commit(ws)
		}
	}
}

// commit runs ws in one transaction and commits it. A write that fails alone is answered with its
// error and the rest are run again without it; any other failure answers every write.
func (g *Group) commit(ws []*groupWrite) {
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if g.opt.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, g.opt.Timeout)
	}
	defer cancel()
	for len(ws) > 0 {
		tx, err := g.db.BeginGroup(ctx)
		if err != nil {
			failAll(ws, NotApplied(err))
			return
		}
		bad, err := runAll(ctx, tx, ws)
		if err != nil {
			tx.Rollback(ctx)
			if bad < 0 || !g.db.Isolated(err) {
				failAll(ws, NotApplied(err))
				return
			}
			ws[bad].finish(NotApplied(err))
			ws = append(ws[:bad], ws[bad+1:]...)
			continue
		}
		err = tx.Commit(ctx, commitName(ws))
		for _, w := range ws {
			switch {
			case err == nil:
				w.finish(nil)
			case w.need == NeedDurable:
				w.finish(err)
			default:
				w.finish(NotApplied(err))
			}
		}
		return
	}
}

// runAll runs each write in tx; on an error it returns the failing write's index.
func runAll(ctx context.Context, tx WriteTx, ws []*groupWrite) (int, error) {
	for i, w := range ws {
		need, err := w.run(ctx, tx)
		if err != nil {
			return i, err
		}
		w.need = need
	}
	return -1, nil
}

// commitName names a group's commit by its first write (errors carry no count of callers).
func commitName(ws []*groupWrite) string { return ws[0].what + " (group)" }

func failAll(ws []*groupWrite, err error) {
	for _, w := range ws {
		w.finish(err)
	}
}
