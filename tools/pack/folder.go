package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/pack/bagit"
	"github.com/scopehygiene/scope-hygiene/pack/mpp"
)

// folder is a package folder on disk: the sealed files, where they live (the folder, or data/
// of a bag), the event log and its path.
type folder struct {
	dir, sealedDir, logPath string
	bag                     bool
	files                   map[string][]byte
	odd                     []string
	log                     []byte
}

// maxSealedFile bounds each file read from a package folder (the caps are far below it).
const maxSealedFile = 64 << 20

// openFolder reads a package folder: every regular file of its sealed directory (anything else
// is listed as odd, never followed) and its event log.
func openFolder(dir string) (*folder, error) {
	f := &folder{dir: dir, sealedDir: dir, logPath: filepath.Join(dir, mpp.EventLogName), files: map[string][]byte{}}
	if fi, err := os.Lstat(filepath.Join(dir, bagit.Declaration)); err == nil && fi.Mode().IsRegular() {
		f.bag, f.sealedDir = true, filepath.Join(dir, bagit.PayloadDir)
	}
	ents, err := os.ReadDir(f.sealedDir)
	if err != nil {
		return nil, fmt.Errorf("pack: read package %s: %w", dir, errors.Unwrap(err))
	}
	for _, e := range ents {
		if e.Name() == mpp.EventLogName {
			continue
		}
		if !e.Type().IsRegular() {
			f.odd = append(f.odd, e.Name()+": not a regular file")
			continue
		}
		b, err := readBounded(filepath.Join(f.sealedDir, e.Name()), maxSealedFile)
		if err != nil {
			return nil, err
		}
		f.files[e.Name()] = b
	}
	if fi, err := os.Lstat(f.logPath); err == nil {
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("pack: %s is not a regular file", mpp.EventLogName)
		}
		if f.log, err = readBounded(f.logPath, maxSealedFile); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// readBounded reads a regular file (never a link or a device) of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("pack: read %s: %w", filepath.Base(path), errors.Unwrap(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("pack: %s is not a regular file", filepath.Base(path))
	}
	h, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("pack: read %s: %w", filepath.Base(path), errors.Unwrap(err))
	}
	defer h.Close()
	b, err := io.ReadAll(io.LimitReader(h, limit+1))
	if err != nil {
		return nil, fmt.Errorf("pack: read %s: %w", filepath.Base(path), errors.Unwrap(err))
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("pack: %s is over %d bytes", filepath.Base(path), limit)
	}
	return b, nil
}

// writeFolder writes a new package folder (refusing an existing one), as a bag when asked.
func writeFolder(dir string, files map[string][]byte, bag bool, created time.Time) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("pack: package directory: %w", errors.Unwrap(err))
	}
	out := files
	if bag {
		var err error
		if out, err = bagit.Bag(files, map[string]string{"Bagging-Date": created.UTC().Format("2006-01-02"), "External-Description": "Memory Portability Package (" + mpp.PackageProfile + "); its event log is the tag file " + mpp.EventLogName}); err != nil {
			return err
		}
		if err := os.Mkdir(filepath.Join(dir, bagit.PayloadDir), 0o700); err != nil {
			return fmt.Errorf("pack: package directory: %w", errors.Unwrap(err))
		}
	}
	for _, name := range sortedNames(out) {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), out[name], 0o600); err != nil {
			return fmt.Errorf("pack: write %s: %w", name, errors.Unwrap(err))
		}
	}
	return nil
}

// appendLog appends one event line, refusing when the log changed since it was read (the
// optimistic check, on disk): the only write an operation makes.
func (f *folder) appendLog(line []byte) error {
	h, err := os.OpenFile(f.logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("pack: open %s: %w", mpp.EventLogName, errors.Unwrap(err))
	}
	defer h.Close()
	fi, err := h.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(f.log)) {
		return errors.New("pack: the event log changed since it was read: run the operation again")
	}
	if _, err := h.Write(line); err != nil {
		return fmt.Errorf("pack: append to %s: %w", mpp.EventLogName, errors.Unwrap(err))
	}
	if err := h.Sync(); err != nil {
		return fmt.Errorf("pack: sync %s: %w", mpp.EventLogName, errors.Unwrap(err))
	}
	f.log = append(f.log, line...)
	return nil
}

// readSources finds the inputs a manifest lists among the regular files directly inside dir,
// reading each no further than the size the manifest declares. Names kept in the manifest are
// looked up only as plain local names (or their base name) confined to dir; labelled inputs
// are matched by size and digest. Links, devices, absolute names and ".." are never followed.
func readSources(dir string, m *mpp.Manifest) (map[string][]byte, []string) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, []string{"--sources: the folder cannot be opened"}
	}
	defer root.Close()
	out := map[string][]byte{}
	var problems []string
	read := func(name string, size int) ([]byte, bool) {
		if !filepath.IsLocal(name) {
			return nil, false
		}
		fi, err := root.Lstat(name)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(size) {
			return nil, false
		}
		h, err := root.Open(name)
		if err != nil {
			return nil, false
		}
		defer h.Close()
		if hi, err := h.Stat(); err != nil || !os.SameFile(fi, hi) {
			return nil, false
		}
		b, err := io.ReadAll(io.LimitReader(h, int64(size)+1))
		if err != nil || len(b) != size {
			return nil, false
		}
		return b, true
	}
	var listing []fs.DirEntry
	if m.NamePolicy == mpp.NamesLabelled {
		listing, _ = fs.ReadDir(root.FS(), ".")
	}
	for k, in := range m.Inputs {
		var b []byte
		ok := false
		if m.NamePolicy == mpp.NamesKept {
			if !filepath.IsLocal(in.File) {
				problems = append(problems, fmt.Sprintf("input %d: its recorded name is not a plain name inside the sources folder: read by its base name only", k+1))
			}
			if b, ok = read(in.File, in.Bytes); !ok {
				b, ok = read(filepath.Base(in.File), in.Bytes)
			}
		} else {
			// by size and digest; failing that, the one file of the declared size (so that a
			// changed source is reported as changed, not as missing)
			var sized [][]byte
			for _, e := range listing {
				if !e.Type().IsRegular() {
					continue
				}
				if c, yes := read(e.Name(), in.Bytes); yes {
					if pack.SHA256Hex(c) == in.SHA256 {
						b, ok = c, true
						break
					}
					sized = append(sized, c)
				}
			}
			if !ok && len(sized) == 1 {
				b, ok = sized[0], true
			}
		}
		if ok {
			out[in.File] = b
		}
	}
	return out, problems
}

// readBag reads every regular file of a bag (for the RFC 8493 check), by slash path.
func readBag(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("pack: %s: not a regular file", filepath.ToSlash(rel))
		}
		b, err := readBounded(p, maxSealedFile)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pack: read bag: %w", err)
	}
	return out, nil
}
