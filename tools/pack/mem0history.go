package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/scopehygiene/scope-hygiene/pack/mem0history"
)

// sourceMem0History is --from mem0-history: Mem0's history table (history.db, or its rows as JSON
// Lines) turned into a mutation-log export for memory-forget-envelope/v1, not a v1 submission.
const sourceMem0History = "mem0-history"

func (c *config) packMem0History(stdout, stderr io.Writer) error {
	if len(c.files) == 0 {
		return errors.New("pack: --from mem0-history needs a history.db (or its rows as JSON Lines)")
	}
	if c.pkg.dir != "" || c.split {
		return errors.New("pack: --package and --split are for v1 submissions, not --from mem0-history")
	}
	var rows bytes.Buffer
	for _, name := range c.files {
		b, err := os.ReadFile(name)
		if err != nil {
			return fmt.Errorf("pack: read %s: %w", name, errors.Unwrap(err))
		}
		if bytes.HasPrefix(b, sqliteMagic) {
			if b, err = historyRows(name); err != nil {
				return err
			}
		}
		rows.Write(b)
		rows.WriteByte('\n')
	}
	ex, inv, err := mem0history.Convert(rows.Bytes())
	if err != nil {
		return fmt.Errorf("pack: %w", err)
	}
	body, err := json.Marshal(ex)
	if err != nil {
		return fmt.Errorf("pack: export: %w", err)
	}
	if c.out == "" {
		if _, err := stdout.Write(body); err != nil {
			return fmt.Errorf("pack: write stdout: %w", err)
		}
	} else if err := os.WriteFile(c.out, body, 0o600); err != nil {
		return fmt.Errorf("pack: write export: %w", err)
	}
	invPath := c.inventory
	if invPath == "" && c.out != "" {
		invPath = strings.TrimSuffix(c.out, ".json") + ".inventory.json"
	}
	if invPath == "" {
		fmt.Fprintf(stderr, "pack: %d events packed (mutation-log for memory-forget-envelope/v1); no inventory written (use -o or --inventory)\n", len(ex.Events))
		return nil
	}
	ib, err := json.MarshalIndent(inv, "", "  ")
	if err != nil {
		return fmt.Errorf("pack: inventory: %w", err)
	}
	if err := os.WriteFile(invPath, append(ib, '\n'), 0o600); err != nil {
		return fmt.Errorf("pack: write inventory: %w", err)
	}
	fmt.Fprintf(stderr, "pack: %d events packed (mutation-log for memory-forget-envelope/v1); inventory %s\n", len(ex.Events), invPath)
	return nil
}
