package postgres

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/scopehygiene/scope-hygiene/server/store/storetest"
)

// silentServer accepts TCP connections and never says a word (a hung PostgreSQL).
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
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
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

func TestOpenFailsFastWhenTheServerNeverAnswers(t *testing.T) {
	addr := silentServer(t)
	start := time.Now()
	s, err := Open(context.Background(), "postgres://postgres@"+addr+"/postgres?sslmode=disable")
	took := time.Since(start)
	if err == nil {
		s.Close()
		t.Fatal("Open succeeded against a server that never answers")
	}
	if took > StartTimeout+time.Second {
		t.Fatalf("Open took %s, want under %s", took, StartTimeout+time.Second)
	}
	if !strings.Contains(err.Error(), "did not answer within 5s") {
		t.Fatalf("unclear error: %v", err)
	}
}

func TestEveryConnectionHasStatementTimeout(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	ctx := context.Background()
	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 3 {
		conn, err := s.pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		var v string
		if err := conn.QueryRow(ctx, `SHOW statement_timeout`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v != "5s" {
			t.Fatalf("connection %d: statement_timeout %q, want 5s", i, v)
		}
		if err := conn.QueryRow(ctx, `SHOW synchronous_commit`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v != "on" {
			t.Fatalf("connection %d: synchronous_commit %q, want on", i, v)
		}
	}
}

func TestReadyMigratesARecreatedSchema(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	ctx := context.Background()
	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tables, err := s.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if _, err := s.pool.Exec(ctx, `DROP TABLE IF EXISTS "`+tb+`" CASCADE`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.ListLedger(ctx, 0, 1); err == nil {
		t.Fatal("ledger readable after its table was dropped")
	}
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("Ready after drop: %v", err)
	}
	if _, err := s.ListLedger(ctx, 0, 1); err != nil {
		t.Fatalf("ledger after Ready: %v", err)
	}
}

// TestPoolChecksConnectionsWithinABound: idle connections are checked every 500 ms, a ping is
// bounded, and the pool has room beside calls a black hole holds (issue 21: recovery within 2 s).
func TestPoolChecksConnectionsWithinABound(t *testing.T) {
	for _, tc := range []struct {
		dsn      string
		maxConns int32
	}{
		{"postgres://u@127.0.0.1:1/db", MaxConns},
		{"postgres://u@127.0.0.1:1/db?pool_max_conns=3", 3},
	} {
		cfg, err := pgxpool.ParseConfig(tc.dsn)
		if err != nil {
			t.Fatal(err)
		}
		applyTimeouts(cfg, strings.Contains(tc.dsn, "pool_max_conns"))
		if cfg.HealthCheckPeriod != HealthCheckPeriod || cfg.PingTimeout != PingTimeout || cfg.MaxConns != tc.maxConns {
			t.Fatalf("%s: health check %s, ping timeout %s, max conns %d", tc.dsn, cfg.HealthCheckPeriod, cfg.PingTimeout, cfg.MaxConns)
		}
		if HealthCheckPeriod+PingTimeout+CallTimeout > 2*time.Second+500*time.Millisecond {
			t.Fatal("the bounds add up to more than the recovery promised")
		}
	}
}
