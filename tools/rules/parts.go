package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// part is one input of a local whole-store check, in the order given.
type part struct {
	name string                        // as the user named it (a path)
	open func() (io.ReadCloser, error) // a new reader of its bytes
}

// listParts turns the command's arguments into parts: each file in the order given; a directory
// is its *.json files in natural order (x.part2.json before x.part10.json); "-" is standard input.
func listParts(args []string) ([]part, error) {
	if len(args) == 0 {
		return nil, errors.New("no export given (a file, a directory of parts, or - for standard input)")
	}
	var out []part
	stdin := false
	for _, a := range args {
		if a == "-" {
			if stdin {
				return nil, errors.New("standard input (-) given more than once")
			}
			stdin = true
			out = append(out, part{name: "-", open: openStdin})
			continue
		}
		fi, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", a, err)
		}
		if !fi.IsDir() {
			out = append(out, filePart(a))
			continue
		}
		ps, err := dirParts(a)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

// The standard input may be read more than once (a whole-store check reads a record again where
// it lies when its part in a cluster or a pointer chain shows later), so the first open spools it
// to a temporary file, removed at once and read through its open descriptor
// afterwards: the bytes are never held in memory, and nothing is left behind.
var (
	spoolOnce sync.Once
	spooled   *os.File
	spoolSize int64
	spoolErr  error
)

func openStdin() (io.ReadCloser, error) {
	spoolOnce.Do(func() {
		f, err := os.CreateTemp("", "rules-stdin-*")
		if err != nil {
			spoolErr = err
			return
		}
		os.Remove(f.Name())
		if spoolSize, err = io.Copy(f, stdin); err != nil {
			f.Close()
			spoolErr = err
			return
		}
		spooled = f
	})
	if spoolErr != nil {
		return nil, fmt.Errorf("read standard input: %w", spoolErr)
	}
	return spooledPart{io.NewSectionReader(spooled, 0, spoolSize)}, nil
}

// spooledPart is one read of the spooled standard input. It keeps the section's ReadAt and Size,
// which the whole-store check uses to read a record again where it lies and to size its tables
// once; closing it leaves the spool open for the next read.
type spooledPart struct{ *io.SectionReader }

// Close does nothing: the spool is read again by the next open.
func (spooledPart) Close() error { return nil }

func filePart(path string) part {
	return part{name: path, open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

// dirParts lists a directory's *.json files (not its subdirectories) in natural order.
func dirParts(dir string) ([]part, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		names = append(names, e.Name())
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("read %s: no *.json files in the directory", dir)
	}
	sort.SliceStable(names, func(i, j int) bool { return naturalLess(names[i], names[j]) })
	out := make([]part, len(names))
	for i, n := range names {
		out[i] = filePart(filepath.Join(dir, n))
	}
	return out, nil
}

// naturalLess orders names with their digit runs compared as numbers, so that part2 comes before
// part10; equal numbers with different zero padding fall back to the plain byte order.
func naturalLess(a, b string) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			ei, ej := i, j
			for ei < len(a) && isDigit(a[ei]) {
				ei++
			}
			for ej < len(b) && isDigit(b[ej]) {
				ej++
			}
			na := strings.TrimLeft(a[i:ei], "0")
			nb := strings.TrimLeft(b[j:ej], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			i, j = ei, ej
			continue
		}
		if ca != cb {
			return ca < cb
		}
		i++
		j++
	}
	if len(a)-i != len(b)-j {
		return len(a)-i < len(b)-j
	}
	return a < b
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
