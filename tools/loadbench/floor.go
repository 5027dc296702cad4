package main

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/scopehygiene/scope-hygiene/evaluator"
	"github.com/scopehygiene/scope-hygiene/server/sign"
	"github.com/scopehygiene/scope-hygiene/server/store"
	"github.com/scopehygiene/scope-hygiene/server/store/sqlite"
)

// The floor under the c = 32 rate target. Whatever the server does, an HTTP audit costs, beside
// the engine, the signature the contract fixes (Ed25519 over the report's whole canonical form:
// two SHA-512 passes over it), the bytes moved over loopback (the body in, the signed report out;
// the kernel copies each on both sides) and the durable ledger row (SQLite as shipped, rows from
// 32 writers at once so that they share commits as at c = 32). Measured here, in this process and
// interleaved with the engine, they bound the rate any server could reach on this machine, HTTP
// parsing and the collector left out: cores / (1 + outside/engine) times the in-process rate.

// floorSlice is how long each of the three runs goes before the next takes over.
const floorSlice = 100 * time.Millisecond

// floor is the CPU an audit's engine, its signing and its loopback transfer each take.
type floor struct {
	engine, sign, transfer, ledger time.Duration
	report                         int // the signed report's mean size in bytes
}

// outside is signing, transfer and the ledger row as a multiple of the engine.
func (f floor) outside() float64 {
	return float64(f.sign+f.transfer+f.ledger) / float64(f.engine)
}

// ceiling is the most audits a second any server reaches on cores cores, as a multiple of the
// in-process single-thread rate, were HTTP, the ledger and the collector free.
func (f floor) ceiling(cores int) float64 {
	return float64(cores) / (1 + f.outside())
}

// measureFloor runs the engine, the signing of its reports and their loopback transfer in turn,
// in slices of floorSlice, for about d in all, and returns each one's CPU per audit.
func measureFloor(bodies [][]byte, dir string, d time.Duration) (floor, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return floor{}, err
	}
	signer := sign.NewSigner(priv)
	reports, docs, err := signedReports(bodies, signer)
	if err != nil {
		return floor{}, err
	}
	link, err := newLoopback()
	if err != nil {
		return floor{}, err
	}
	defer link.close()
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "floor.sqlite"))
	if err != nil {
		return floor{}, err
	}
	defer db.Close()
	var f floor
	var nEngine, nSign, nTransfer, nLedger int
	for start := time.Now(); time.Since(start) < d; {
		cpu := selfCPU()
		n, _, err := inProcessN(bodies, floorSlice)
		if err != nil {
			return floor{}, err
		}
		f.engine += selfCPU() - cpu
		nEngine += n

		cpu = selfCPU()
		for t := time.Now(); time.Since(t) < floorSlice; nSign++ {
			u, err := signer.Canonicalize(reports[nSign%len(reports)])
			if err != nil {
				return floor{}, fmt.Errorf("canonical form: %w", err)
			}
			sign.Recycle(u.Sign())
		}
		f.sign += selfCPU() - cpu

		cpu = selfCPU()
		for t := time.Now(); time.Since(t) < floorSlice; nTransfer++ {
			i := nTransfer % len(bodies)
			if err := link.exchange(bodies[i], len(docs[i])); err != nil {
				return floor{}, fmt.Errorf("loopback: %w", err)
			}
		}
		f.transfer += selfCPU() - cpu

		cpu = selfCPU()
		n, err = ledgerRows(db, floorSlice)
		if err != nil {
			return floor{}, fmt.Errorf("ledger: %w", err)
		}
		f.ledger += selfCPU() - cpu
		nLedger += n
	}
	if nEngine == 0 || nSign == 0 || nTransfer == 0 || nLedger == 0 {
		return floor{}, fmt.Errorf("floor: too short a run")
	}
	f.engine, f.sign, f.transfer = perRequest(f.engine, nEngine), perRequest(f.sign, nSign), perRequest(f.transfer, nTransfer)
	f.ledger = perRequest(f.ledger, nLedger)
	for _, d := range docs {
		f.report += len(d)
	}
	f.report /= len(docs)
	return f, nil
}

// floorWriters is how many rows are written at once, as many as the highest level's callers.
const floorWriters = 32

// ledgerRows appends house-audit ledger rows from floorWriters goroutines for d and returns how
// many committed.
func ledgerRows(db store.Store, d time.Duration) (int, error) {
	var rows atomic.Int64
	errs := make(chan error, floorWriters)
	stop := time.Now().Add(d)
	for range floorWriters {
		go func() {
			for time.Now().Before(stop) {
				now := time.Now().UTC()
				e := store.LedgerEntry{Timestamp: now, Day: store.Day(now), CriteriaVersion: "floor",
					VerdictLine: "floor", Op: store.OpAudit, House: true}
				if _, err := db.AppendLedger(context.Background(), e); err != nil {
					errs <- err
					return
				}
				rows.Add(1)
			}
			errs <- nil
		}()
	}
	var first error
	for range floorWriters {
		first = cmp.Or(first, <-errs)
	}
	return int(rows.Load()), first
}

// signedReports audits each body and signs its report once, for the transfer's sizes.
func signedReports(bodies [][]byte, signer *sign.Signer) ([]*evaluator.Report, [][]byte, error) {
	psOnce.Do(loadProgramSet)
	if psErr != nil {
		return nil, nil, psErr
	}
	var reports []*evaluator.Report
	var docs [][]byte
	for _, b := range bodies {
		rep, ref, err := evaluator.Audit(ps, b, time.Now())
		if err != nil || ref != nil {
			return nil, nil, fmt.Errorf("in-process audit refused or failed")
		}
		doc, err := signer.Sign(rep)
		if err != nil {
			return nil, nil, err
		}
		reports = append(reports, rep)
		docs = append(docs, doc)
	}
	return reports, docs, nil
}

// loopback is one TCP connection over 127.0.0.1 with an echoing peer in this process: the peer
// reads a body whole and answers with as many bytes as it is asked for, as a server reads a
// request and writes its report.
type loopback struct {
	client net.Conn
	ln     net.Listener
	sizes  chan [2]int
	done   chan error
	in     []byte
	// received counts the bytes the peer has read, for the test.
	received atomic.Int64
}

func newLoopback() (*loopback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &loopback{ln: ln, sizes: make(chan [2]int), done: make(chan error, 1)}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
		l.serve(c)
	}()
	if l.client, err = net.Dial("tcp", ln.Addr().String()); err != nil {
		ln.Close()
		return nil, err
	}
	if _, ok := <-accepted; !ok {
		l.client.Close()
		return nil, fmt.Errorf("loopback: accept failed")
	}
	return l, nil
}

// serve is the peer: for each exchange, read the body, write the answer's bytes.
func (l *loopback) serve(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 64<<10)
	var out []byte
	for sz := range l.sizes {
		var err error
		for left := sz[0]; left > 0 && err == nil; {
			var n int
			n, err = c.Read(buf[:min(len(buf), left)])
			left -= n
			l.received.Add(int64(n))
		}
		if err == nil {
			if cap(out) < sz[1] {
				out = make([]byte, sz[1])
			}
			_, err = c.Write(out[:sz[1]])
		}
		l.done <- err
	}
}

// exchange sends body and reads back answer bytes, as an HTTP audit moves them.
func (l *loopback) exchange(body []byte, answer int) error {
	l.sizes <- [2]int{len(body), answer}
	// The peer reads while this writes, so the write returns once the body is all sent.
	if _, err := l.client.Write(body); err != nil {
		return err
	}
	if cap(l.in) < answer {
		l.in = make([]byte, answer)
	}
	if _, err := io.ReadFull(l.client, l.in[:answer]); err != nil {
		return err
	}
	return <-l.done
}

func (l *loopback) close() {
	close(l.sizes)
	l.client.Close()
	l.ln.Close()
}

// print writes the floor and the ceiling it sets for the c = 32 rate target on cores cores.
func (f floor) print(w io.Writer, cores int) {
	budget := float64(cores)/targetScale - 1
	verdict := "reachable on this machine only if HTTP parsing and the collector cost less than the rest of the budget"
	if f.ceiling(cores) < targetScale {
		verdict = "not reachable on this machine by any server"
	}
	fmt.Fprintf(w, "outside the engine, at least (in process, interleaved in %s slices): signing a %d-byte report %.3f ms "+
		"(the contract's Ed25519 over its canonical form) + the body in and the report out over loopback TCP %.3f ms "+
		"+ a ledger row in SQLite as shipped, %d writers at once, %.3f ms = %.2fx the engine's %.3f ms; "+
		"the c = 32 rate target on %d cores leaves %.2fx outside the engine; the most any server reaches is %.2fx the in-process rate "+
		"(target %.1f): %s\n\n",
		floorSlice, f.report, ms(f.sign), ms(f.transfer), floorWriters, ms(f.ledger), f.outside(), ms(f.engine), cores, budget, f.ceiling(cores), targetScale, verdict)
}
