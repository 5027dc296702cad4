package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShortHouseTokenRefused(t *testing.T) {
	for _, tc := range []struct {
		token string
		ok    bool
	}{{"", true}, {"x", false}, {strings.Repeat("t", 31), false}, {strings.Repeat("t", 32), true}} {
		c := config{HouseToken: tc.token}
		if err := c.checkHouseToken(); (err == nil) != tc.ok {
			t.Errorf("house token of %d bytes: %v, want ok=%v", len(tc.token), err, tc.ok)
		} else if err != nil && strings.Contains(err.Error(), tc.token) {
			t.Errorf("the refusal quotes the token: %v", err)
		}
	}
	// serve refuses to start with one.
	c := config{HouseToken: "x", Store: "sqlite:" + filepath.Join(t.TempDir(), "db")}
	if err := runServer(context.Background(), c, newLogger(&bytes.Buffer{}, "error"), nil); err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Fatalf("serve with a one-byte house token: %v", err)
	}
}

func TestLedgerRefusesAMissingStore(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "var", "scope-hygiene.db")
	for _, args := range [][]string{{"-store", "sqlite:" + path}, {"tripwires", "-store", "sqlite:" + path}} {
		var out, errOut bytes.Buffer
		if rc := ledger(context.Background(), args, &out, &errOut); rc != 1 || !strings.Contains(errOut.String(), "no store at") {
			t.Fatalf("ledger %v on a missing store: exit %d, %q", args, rc, errOut.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "var")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("ledger %v created %s", args, filepath.Join(dir, "var"))
		}
	}
}

func TestConnCap(t *testing.T) {
	auto, err := connCap(0)
	if err != nil || auto < 16 {
		t.Fatalf("automatic cap %d, %v", auto, err)
	}
	if n, err := connCap(20); err != nil || n != 20 {
		t.Fatalf("configured cap: %d %v", n, err)
	}
	if _, err := connCap(auto + 1); err == nil {
		t.Fatal("a cap above the descriptor limit was accepted")
	}
}
