//go:build faults

package faults_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"
)

// TestKillUnderLoad kills the binary with SIGKILL three times under a bounded audit load: the
// ledger holds a row for every 200 seen, at most one more per request in flight at the kill,
// no duplicate and no half row, and the store opens again each time.
func TestKillUnderLoad(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			spec := b.spec(t)
			dir := t.TempDir()
			var ok, unknown, freeOK, freeUnknown int64
			const kills, workers, perRound = 3, 6, 40
			for round := range kills {
				s := start(t, opts{store: spec, dir: dir})
				var stop atomic.Bool
				var roundOK atomic.Int64
				var wg sync.WaitGroup
				for w := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < 200 && !stop.Load(); i++ {
							r, _, err := s.houseAudit()
							switch {
							case err != nil:
								atomic.AddInt64(&unknown, 1) // in flight at the kill: answered or not
								return
							case r.StatusCode == 200:
								atomic.AddInt64(&ok, 1)
								roundOK.Add(1)
							default:
								t.Errorf("round %d: audit answered %d", round, r.StatusCode)
								return
							}
							// A free pre-check from an address of its own: one free-tier count each.
							src := net.IPv4(127, byte(1+round), byte(1+w), byte(1+i))
							code, err := s.precheckFrom(src)
							switch {
							case err != nil:
								atomic.AddInt64(&freeUnknown, 1)
								return
							case code == 200:
								atomic.AddInt64(&freeOK, 1)
							default:
								t.Errorf("round %d: precheck answered %d", round, code)
								return
							}
						}
					}()
				}
				deadline := time.Now().Add(30 * time.Second)
				for roundOK.Load() < perRound && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				s.kill() // while the workers are still sending
				stop.Store(true)
				wg.Wait()
				if roundOK.Load() < perRound {
					t.Fatalf("round %d: only %d audits answered 200 before the deadline", round, roundOK.Load())
				}
			}
			s := start(t, opts{store: spec, dir: dir}) // the store opens after the last kill
			s.kill()
			st := openStore(t, spec)
			rows := allLedger(t, st)
			n := int64(len(rows))
			tw, err := st.Tripwires(context.Background(), time.Now().Add(time.Hour), 48*time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d kills; audits: %d answered 200, %d in flight at a kill, %d ledger rows; pre-checks: %d answered 200, %d in flight, %d free-tier counts",
				b.name, kills, ok, unknown, n, freeOK, freeUnknown, tw.FreeCalls)
			if tw.FreeCalls < freeOK || tw.FreeCalls > freeOK+freeUnknown {
				t.Fatalf("free-tier counts %d; %d pre-checks answered 200 and %d were in flight", tw.FreeCalls, freeOK, freeUnknown)
			}
			if n < ok || n > ok+unknown {
				t.Fatalf("ledger has %d rows; %d audits answered 200 and %d were in flight", n, ok, unknown)
			}
			seen := map[int64]bool{}
			for _, r := range rows {
				if seen[r.ID] {
					t.Fatalf("duplicate ledger id %d", r.ID)
				}
				seen[r.ID] = true
				if !r.House || r.Op != "audit" || r.CriteriaVersion == "" || !strings.HasPrefix(r.VerdictLine, "MEMORY SCOPE-HYGIENE") ||
					r.UndeclaredClusters == nil || r.Timestamp.IsZero() {
					t.Fatalf("half row: %+v", r)
				}
			}
			if p, isSQLite := strings.CutPrefix(spec, "sqlite:"); isSQLite {
				db, err := sql.Open("sqlite", "file:"+p)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				var res string
				if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
					t.Fatalf("integrity_check: %q %v", res, err)
				}
			}
		})
	}
}

// TestIdleFloodPastTheDescriptorLimit runs the binary with a descriptor limit of 256 and opens
// far more idle connections than that: real requests still answer 200 within 5 s, and the
// metrics are served on their own address only.
func TestIdleFloodPastTheDescriptorLimit(t *testing.T) {
	metricsAddr := freeAddr(t)
	s := start(t, opts{store: backends[0].spec(t), nofile: 256, args: []string{"-metrics-addr", metricsAddr}})
	addr := strings.TrimPrefix(s.base, "http://")
	const flood = 700
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range flood {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Fatalf("flood connection %d: %v", len(held), err)
		}
		held = append(held, c)
	}
	// Keep flooding while the real requests run (bounded).
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 2000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				defer c.Close()
			}
			time.Sleep(time.Millisecond)
		}
	}()
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for i := range 20 {
		start := time.Now()
		var r *http.Response
		var err error
		if i%2 == 0 {
			r, err = c.Get(s.base + "/readyz")
		} else {
			req, _ := http.NewRequest("POST", s.base+"/audit", strings.NewReader(export))
			req.Header.Set("Authorization", "Bearer "+houseToken)
			r, err = c.Do(req)
		}
		if err != nil {
			t.Fatalf("real request %d under the flood: %v\n%s", i, err, s.logs.String())
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		if r.StatusCode != 200 || time.Since(start) > 5*time.Second {
			t.Fatalf("real request %d under the flood: %d after %s", i, r.StatusCode, time.Since(start))
		}
	}
	close(stop)
	wg.Wait()
	if code, _, _ := s.get("/metrics"); code != 404 {
		t.Fatalf("/metrics on the API address: %d, want 404", code)
	}
	r, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || !strings.Contains(string(b), "scope_hygiene_http_requests_total") {
		t.Fatalf("metrics address: %d", r.StatusCode)
	}
}

// proxy is a loopback TCP relay to PostgreSQL that the test cuts and restores.
type proxy struct {
	t      *testing.T
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	p := &proxy{t: t, target: target, addr: freeAddr(t)}
	p.up()
	t.Cleanup(p.down)
	return p
}

func (p *proxy) up() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
}

// down closes the listener and every relayed connection: the store is gone.
func (p *proxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestStoreGoesAwayAndComesBack: audits answer 503 with Retry-After while the store is gone and
// /readyz says not ready; when it is back, /readyz is ready again and audits succeed, with a
// ledger row for every 200 and none for a 503. PostgreSQL goes away through a cut relay, SQLite
// by having its tables dropped (a database recreated under the service).
func TestStoreGoesAwayAndComesBack(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			spec := b.spec(t)
			served := spec
			var gone, back func()
			if p, isSQLite := strings.CutPrefix(spec, "sqlite:"); isSQLite {
				gone = func() {
					db, err := sql.Open("sqlite", "file:"+p+"?_pragma=busy_timeout(5000)")
					if err != nil {
						t.Fatal(err)
					}
					defer db.Close()
					rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
					if err != nil {
						t.Fatal(err)
					}
					var tables []string
					for rows.Next() {
						var n string
						rows.Scan(&n)
						tables = append(tables, n)
					}
					rows.Close()
					if len(tables) < 4 {
						t.Fatalf("tables before the drop: %v", tables)
					}
					for _, tb := range tables {
						if _, err := db.Exec(`DROP TABLE "` + tb + `"`); err != nil {
							t.Fatal(err)
						}
					}
				}
				back = func() {}
			} else {
				cfg, err := pgx.ParseConfig(spec)
				if err != nil {
					t.Fatal(err)
				}
				px := newProxy(t, net.JoinHostPort(cfg.Host, itoa(int(cfg.Port))))
				served = strings.Replace(spec, net.JoinHostPort(cfg.Host, itoa(int(cfg.Port))), px.addr, 1)
				gone, back = px.down, px.up
			}
			s := start(t, opts{store: served})
			if r, _, err := s.houseAudit(); err != nil || r.StatusCode != 200 {
				t.Fatalf("audit before: %v", err)
			}
			gone()
			var r *http.Response
			var err error
			startDown := time.Now()
			for i := 0; i < 3; i++ {
				r, _, err = s.houseAudit()
				if err != nil {
					t.Fatal(err)
				}
				if r.StatusCode == 503 {
					break
				}
			}
			if r.StatusCode != 503 || r.Header.Get("Retry-After") == "" || time.Since(startDown) > 10*time.Second {
				t.Fatalf("audit with the store gone: %d Retry-After %q after %s", r.StatusCode, r.Header.Get("Retry-After"), time.Since(startDown))
			}
			if b.name == "postgres" {
				if code, h, body := s.get("/readyz"); code != 503 || h.Get("Retry-After") == "" || !strings.Contains(string(body), "not_ready") {
					t.Fatalf("readyz with the store gone: %d %s", code, body)
				}
			}
			back()
			deadline := time.Now().Add(15 * time.Second)
			for {
				code, _, body := s.get("/readyz")
				if code == 200 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("readyz never true again: %d %s\n%s", code, body, s.logs.String())
				}
				time.Sleep(100 * time.Millisecond)
			}
			ok := 0
			for range 3 {
				if r, _, err := s.houseAudit(); err == nil && r.StatusCode == 200 {
					ok++
				}
			}
			if ok != 3 {
				t.Fatalf("after recovery %d of 3 audits answered 200\n%s", ok, s.logs.String())
			}
			logs := s.logs.String()
			if !strings.Contains(logs, `"cause":`) || strings.Contains(logs, "prefers tea") {
				t.Fatalf("the store failure's cause is not logged, or content is:\n%s", logs)
			}
			s.kill()
			rows := allLedger(t, openStore(t, spec))
			want := 3
			if b.name == "postgres" {
				want = 4 // the relay cut lost no table: the first audit's row is still there
			}
			if len(rows) != want {
				t.Fatalf("ledger rows %d, want %d", len(rows), want)
			}
		})
	}
}

// TestHungPostgresFailsTheStartFast: a PostgreSQL that accepts and never answers makes serve exit
// non-zero within 5 s with a clear message.
func TestHungPostgresFailsTheStartFast(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()
	began := time.Now()
	s := launch(t, opts{store: "postgres://postgres@" + ln.Addr().String() + "/postgres?sslmode=disable"})
	var exitErr error
	select {
	case exitErr = <-s.exited:
		s.exited <- exitErr
	case <-time.After(10 * time.Second):
		t.Fatalf("serve still running after 10 s against a silent PostgreSQL")
	}
	took := time.Since(began)
	var ee interface{ ExitCode() int }
	if !errors.As(exitErr, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v", exitErr)
	}
	if took > 5*time.Second+500*time.Millisecond {
		t.Fatalf("start failed after %s, want within 5 s", took)
	}
	if !strings.Contains(s.logs.String(), "did not answer within 5s") {
		t.Fatalf("unclear message:\n%s", s.logs.String())
	}
	t.Logf("start failed after %s", took.Round(time.Millisecond))
}

func itoa(n int) string { return strconv.Itoa(n) }
