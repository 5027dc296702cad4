package store

import (
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
)

// Migration is one numbered schema step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

var migrationName = regexp.MustCompile(`^([0-9]{4})_([a-z0-9_]+)\.sql$`)

// Migrations reads the numbered migration files (NNNN_name.sql) of dir in fsys, in version order.
// Versions must be unique and start at 1; a gap is allowed (a feature's file may land later).
func Migrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []Migration
	seen := map[int]string{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %q: name must be NNNN_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		if v == 0 {
			return nil, fmt.Errorf("migration file %q: versions start at 0001", e.Name())
		}
		if prev, ok := seen[v]; ok {
			return nil, fmt.Errorf("migration files %q and %q share version %d", prev, e.Name(), v)
		}
		seen[v] = e.Name()
		b, err := fs.ReadFile(fsys, dir+"/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %q: %w", e.Name(), err)
		}
		out = append(out, Migration{Version: v, Name: e.Name(), SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	if len(out) == 0 {
		return nil, fmt.Errorf("no migrations in %s", dir)
	}
	return out, nil
}
