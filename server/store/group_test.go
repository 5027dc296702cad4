package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeDB is a GroupDB whose transactions record the writes they committed.
type fakeDB struct {
	mu        sync.Mutex
	committed []string
	commitErr error
	hold      chan struct{} // when set, a commit waits for it to close
	begun     chan struct{} // when set, told of every begin
}

var errConstraint = errors.New("fake: constraint")

func (d *fakeDB) BeginGroup(context.Context) (WriteTx, error) {
	if d.begun != nil {
		d.begun <- struct{}{}
	}
	return &fakeTx{db: d}, nil
}

func (d *fakeDB) Isolated(err error) bool { return errors.Is(err, errConstraint) }

type fakeTx struct {
	WriteTx // the keyed methods are not used here
	db      *fakeDB
	writes  []string
}

func (t *fakeTx) Commit(context.Context, string) error {
	if t.db.hold != nil {
		<-t.db.hold
	}
	t.db.mu.Lock()
	defer t.db.mu.Unlock()
	if t.db.commitErr != nil {
		return t.db.commitErr
	}
	t.db.committed = append(t.db.committed, t.writes...)
	return nil
}

func (t *fakeTx) Rollback(context.Context) {}

// write is a WriteFunc that records name, or fails with err.
func write(name string, need Need, err error) WriteFunc {
	return func(_ context.Context, tx WriteTx) (Need, error) {
		if err != nil {
			return NeedNothing, err
		}
		tx.(*fakeTx).writes = append(tx.(*fakeTx).writes, name)
		return need, nil
	}
}

// queued holds the lane in a first group's commit, queues writes behind it and returns their
// errors once the lane is let go: the queued writes form the second group.
func queued(t *testing.T, d *fakeDB, ws map[string]WriteFunc) map[string]error {
	t.Helper()
	d.hold, d.begun = make(chan struct{}), make(chan struct{}, 16)
	g := NewGroup(d, GroupOptions{Lanes: 1})
	defer g.Close()
	first := make(chan error, 1)
	go func() { first <- g.Write(context.Background(), "first", write("first", NeedDurable, nil)) }()
	<-d.begun
	var mu sync.Mutex
	var wg sync.WaitGroup
	out := map[string]error{}
	for name, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := g.Write(context.Background(), name, w)
			mu.Lock()
			out[name] = err
			mu.Unlock()
		}()
	}
	for { // every write is queued behind the held commit before the lane goes on
		g.mu.Lock()
		n := len(g.q)
		g.mu.Unlock()
		if n == len(ws) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(d.hold)
	wg.Wait()
	if err := <-first; err != nil && d.commitErr == nil {
		t.Fatalf("first write: %v", err)
	}
	return out
}

// TestGroupFailedCommitMarksEveryWrite: a failed commit answers each write of its group with the
// commit's error as the backend marked it, and a retry's count or a refusal NotApplied.
func TestGroupFailedCommitMarksEveryWrite(t *testing.T) {
	d := &fakeDB{commitErr: NotDurable(errors.New("fake: sync failed"))}
	got := queued(t, d, map[string]WriteFunc{
		"use": write("use", NeedDurable, nil), "retry": write("retry", NeedCount, nil), "refusal": write("refusal", NeedNothing, nil),
	})
	if !errors.Is(got["use"], ErrNotDurable) || errors.Is(got["use"], ErrNotApplied) {
		t.Errorf("a use in a group whose commit failed: %v, want the commit's NotDurable", got["use"])
	}
	for _, n := range []string{"retry", "refusal"} {
		if !errors.Is(got[n], ErrNotApplied) {
			t.Errorf("%s in a group whose commit failed: %v, want NotApplied", n, got[n])
		}
	}
}

// TestGroupIsolatedFailureAlone: a write failing alone is answered alone; the others of its
// group commit together, once.
func TestGroupIsolatedFailureAlone(t *testing.T) {
	d := &fakeDB{}
	got := queued(t, d, map[string]WriteFunc{
		"a": write("a", NeedDurable, nil), "bad": write("bad", NeedDurable, errConstraint), "b": write("b", NeedDurable, nil),
	})
	if !errors.Is(got["bad"], ErrNotApplied) || !errors.Is(got["bad"], errConstraint) {
		t.Errorf("failing write: %v, want its own error, NotApplied", got["bad"])
	}
	if got["a"] != nil || got["b"] != nil {
		t.Errorf("writes beside it: %v %v, want committed", got["a"], got["b"])
	}
	if len(d.committed) != 3 { // first, a, b
		t.Errorf("committed %v, want first, a and b once each", d.committed)
	}
}

// TestGroupOtherFailureFailsTheGroup: an error that is not the write's own fails every write of
// the group, NotApplied (nothing was committed).
func TestGroupOtherFailureFailsTheGroup(t *testing.T) {
	d := &fakeDB{}
	got := queued(t, d, map[string]WriteFunc{
		"a": write("a", NeedDurable, nil), "io": write("io", NeedDurable, errors.New("fake: disk I/O error")),
	})
	for n, err := range got {
		if !errors.Is(err, ErrNotApplied) {
			t.Errorf("%s: %v, want NotApplied", n, err)
		}
	}
	if len(d.committed) != 1 {
		t.Errorf("committed %v, want only the first group's write", d.committed)
	}
}

// TestGroupLeftQueueWritesNothing: a caller whose context ends while its write waits is
// answered NotApplied and its write never runs; a closed group refuses writes.
func TestGroupLeftQueueWritesNothing(t *testing.T) {
	d := &fakeDB{hold: make(chan struct{}), begun: make(chan struct{}, 4)}
	g := NewGroup(d, GroupOptions{Lanes: 1})
	go g.Write(context.Background(), "first", write("first", NeedDurable, nil))
	<-d.begun
	ctx, cancel := context.WithCancel(context.Background())
	left := make(chan error, 1)
	go func() { left <- g.Write(ctx, "left", write("left", NeedDurable, nil)) }()
	for {
		g.mu.Lock()
		n := len(g.q)
		g.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-left; !errors.Is(err, ErrNotApplied) || !errors.Is(err, context.Canceled) {
		t.Fatalf("a caller that left the queue: %v, want NotApplied", err)
	}
	close(d.hold)
	g.Close()
	if len(d.committed) != 1 || d.committed[0] != "first" {
		t.Fatalf("committed %v, want only first", d.committed)
	}
	if err := g.Write(context.Background(), "late", write("late", NeedDurable, nil)); !errors.Is(err, ErrNotApplied) {
		t.Fatalf("a write on a closed group: %v, want NotApplied", err)
	}
}
