package rules

import (
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// The criteria kinds: each names the evaluator mechanics a criteria file needs. A file without
// `kind` is KindMemoryExport (v1's criteria.yaml).
const (
	KindMemoryExport = "memory-export"
	KindMutationLog  = "mutation-log"
)

// KindOf reads the top-level `kind` of a criteria file (KindMemoryExport when absent).
func KindOf(src []byte) (string, error) {
	var head struct {
		Kind string `yaml:"kind"`
	}
	if err := yaml.Unmarshal(src, &head); err != nil {
		return "", fmt.Errorf("criteria kind: %w", err)
	}
	if head.Kind == "" {
		return KindMemoryExport, nil
	}
	return head.Kind, nil
}

// Served is what every compiled criteria revision answers, whatever its kind.
type Served interface {
	ID() string
	Revision() string
	Digest() string
	Kind() string
	Name() string
	Source() []byte
	Document() (map[string]any, error)
}

var (
	_ Served = (*ProgramSet)(nil)
	_ Served = (*MutLogSet)(nil)
)

// Kind of a v1 program set.
func (ps *ProgramSet) Kind() string { return KindMemoryExport }

// LoadAny compiles a criteria file of any kind the engine has mechanics for.
func LoadAny(name string, src []byte) (Served, error) {
	k, err := KindOf(src)
	if err != nil {
		return nil, err
	}
	switch k {
	case KindMemoryExport:
		return Load(name, src)
	case KindMutationLog:
		return LoadMutationLog(name, src)
	}
	return nil, fmt.Errorf("criteria kind %q: no evaluator mechanics for it (known: %s, %s)", k, KindMemoryExport, KindMutationLog)
}

// LoadAnyFile reads and compiles a criteria file of any kind.
func LoadAnyFile(path string) (Served, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read criteria: %w", err)
	}
	return LoadAny(filepath.Base(path), src)
}
