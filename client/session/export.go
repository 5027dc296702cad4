package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/scopehygiene/scope-hygiene/pack"
)

// readExport reads the one export file, or packs the native dump files (hash-only by default).
func (s *session) readExport(files []string) ([]byte, error) {
	if s.o.From == "" {
		b, err := os.ReadFile(files[0])
		if err != nil {
			return nil, fmt.Errorf("read export: %w", err)
		}
		s.out.Summary.SentBytes = len(b)
		return b, nil
	}
	hashOnly := !s.o.FullText
	b, n, err := packNative(pack.Source(s.o.From), files, hashOnly)
	if err != nil {
		return nil, err
	}
	s.out.Summary.HashOnly, s.out.Summary.SentBytes = &hashOnly, len(b)
	form := "hash-only"
	if !hashOnly {
		form = "full text"
	}
	s.progress(fmt.Sprintf("packed %d files from %s into %d records (%s, %d bytes)", len(files), s.o.From, n, form, len(b)))
	return b, nil
}

// packNative is the one call into the pack package.
func packNative(src pack.Source, files []string, hashOnly bool) ([]byte, int, error) {
	in := pack.Inputs{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, 0, fmt.Errorf("read dump: %w", err)
		}
		in.Records = append(in.Records, pack.File{Name: filepath.Base(f), Data: b})
	}
	res, err := pack.Pack(in, pack.Options{Source: src, HashOnly: hashOnly})
	if err != nil {
		return nil, 0, err
	}
	b, err := res.Submission.Marshal()
	if err != nil {
		return nil, 0, err
	}
	if err := pack.CheckCaps(len(res.Submission.Records), b); err != nil {
		return nil, 0, err
	}
	return b, len(res.Submission.Records), nil
}

// outPath is where the signed result is saved.
func (s *session) outPath() string {
	if s.o.Out != "" {
		return s.o.Out
	}
	return "scope-hygiene-" + s.op + ".json"
}

// save writes the signed result byte for byte, and the /criteria document beside it.
func (s *session) save(doc []byte) error {
	out := s.outPath()
	crit := strings.TrimSuffix(out, ".json") + ".criteria.json"
	if err := os.WriteFile(out, doc, 0o644); err != nil {
		return fmt.Errorf("save result: %w", err)
	}
	if err := os.WriteFile(crit, s.critDoc, 0o644); err != nil {
		return fmt.Errorf("save criteria: %w", err)
	}
	s.out.Summary.Saved, s.out.Summary.Criteria = out, crit
	s.progress("saved " + out + " and the criteria document " + crit)
	return nil
}
