package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/scopehygiene/scope-hygiene/pack"
)

// FuzzHistoryDB: a history.db of any bytes never panics the reader; what it accepts is JSON
// Lines of objects, and the file's exact bytes stay its digest.
func FuzzHistoryDB(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "seed.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		f.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE history (id TEXT PRIMARY KEY, memory_id TEXT, old_memory TEXT, new_memory TEXT, event TEXT, created_at DATETIME, updated_at DATETIME, is_deleted INTEGER, actor_id TEXT, role TEXT)`,
		`INSERT INTO history VALUES ('h1','m1',NULL,'x','ADD','2025-06-01T09:12:44+00:00',NULL,0,NULL,NULL)`,
		`INSERT INTO history VALUES ('h2','m1','x',NULL,'DELETE',NULL,NULL,1,NULL,NULL)`,
	} {
		if _, err := db.Exec(q); err != nil {
			f.Fatal(err)
		}
	}
	db.Close()
	seed, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(append([]byte("SQLite format 3\x00"), make([]byte, 200)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "history.db")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		files := []pack.File{{Name: p, Data: data}}
		if err := readHistoryDBs(files); err != nil {
			return
		}
		if !bytes.HasPrefix(data, sqliteMagic) {
			if !bytes.Equal(files[0].Data, data) || files[0].Raw != nil {
				t.Fatal("a non-SQLite history file was changed")
			}
			return
		}
		if !bytes.Equal(files[0].Raw, data) {
			t.Fatal("the raw bytes of a history.db were not kept")
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(files[0].Data, []byte("\n")), []byte("\n")) {
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatalf("a history row is not a JSON object: %v", err)
			}
		}
	})
}
