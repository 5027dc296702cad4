package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"

	"github.com/scopehygiene/scope-hygiene/pack"

	_ "modernc.org/sqlite" // database/sql driver "sqlite" (pure Go)
)

// sqliteMagic opens every SQLite 3 database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// readHistoryDBs reads each Mem0 OSS history.db given as a history file directly (the pure-Go
// SQLite driver the project already uses), turning its history table into JSON Lines, one row
// per line with the table's own column names. The file's exact bytes stay the input's digest.
func readHistoryDBs(files []pack.File) error {
	for i, f := range files {
		if !bytes.HasPrefix(f.Data, sqliteMagic) {
			continue
		}
		rows, err := historyRows(f.Name)
		if err != nil {
			return err
		}
		files[i].Raw = f.Data
		files[i].Data = rows
	}
	return nil
}

func historyRows(path string) ([]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("pack: %s: %w", path, err)
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro&immutable=1"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("pack: %s: open SQLite: %w", path, err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT * FROM history`)
	if err != nil {
		return nil, fmt.Errorf("pack: %s: not a Mem0 history.db (no readable history table)", path)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("pack: %s: history columns: %w", path, err)
	}
	var out bytes.Buffer
	n := 0
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for k := range vals {
			ptrs[k] = &vals[k]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("pack: %s: history row %d: %w", path, n, err)
		}
		row := make(map[string]any, len(cols))
		for k, c := range cols {
			switch v := vals[k].(type) {
			case []byte:
				row[c] = string(v)
			default:
				row[c] = v
			}
		}
		b, err := json.Marshal(row)
		if err != nil {
			return nil, fmt.Errorf("pack: %s: history row %d: not representable as JSON", path, n)
		}
		out.Write(b)
		out.WriteByte('\n')
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pack: %s: history rows: %w", path, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("pack: %s: the history table is empty", path)
	}
	return out.Bytes(), nil
}
