package main

import (
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strings"
	"time"

	scopehygiene "github.com/scopehygiene/scope-hygiene"
	"github.com/scopehygiene/scope-hygiene/corpus"
	"github.com/scopehygiene/scope-hygiene/rules"
	"github.com/scopehygiene/scope-hygiene/server/api"
	"github.com/scopehygiene/scope-hygiene/server/engine"
)

// loadMounts compiles every further criteria file embedded under criteria/ and gates each on its
// own pinned corpus, exactly as the primary criteria is gated: a file that does not compile, whose
// corpus does not re-pass 100% or whose pin does not match stops the start. A criteria file's
// routes are /v1/<file name without .yaml>; its kind selects the engine, never its name.
func loadMounts(logger *slog.Logger, stopped []string) ([]api.Mount, error) {
	names, err := fs.Glob(scopehygiene.CriteriaDir, "criteria/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("list criteria: %w", err)
	}
	sort.Strings(names)
	var out []api.Mount
	for _, name := range names {
		src, err := fs.ReadFile(scopehygiene.CriteriaDir, name)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		set, err := rules.LoadAny(path.Base(name), src)
		if err != nil {
			return nil, fmt.Errorf("criteria %s: %w", name, err)
		}
		ms, ok := set.(*rules.MutLogSet)
		if !ok {
			return nil, fmt.Errorf("criteria %s: kind %s is served only as the primary criteria", name, set.Kind())
		}
		started := time.Now()
		dir := strings.TrimPrefix(path.Clean(ms.Criteria().Corpus.Dir), "corpus/")
		sub, err := fs.Sub(scopehygiene.Corpus, path.Join("corpus", dir))
		if err != nil {
			return nil, fmt.Errorf("criteria %s: corpus: %w", name, err)
		}
		sum, err := corpus.GateMutLog(ms, sub, stopped)
		if err != nil {
			return nil, fmt.Errorf("criteria %s: %w", name, err)
		}
		logger.Info("corpus re-passed", "criteria_id", ms.ID(), "criteria_revision", ms.Revision(), "cases", sum.Passed,
			"pin", ms.Criteria().Corpus.SHA256, "duration_ms", time.Since(started).Milliseconds())
		doc, err := ms.Document()
		if err != nil {
			return nil, err
		}
		out = append(out, api.Mount{Prefix: "/v1/" + strings.TrimSuffix(path.Base(name), ".yaml"), Criteria: ms, Document: doc,
			Engine: engine.MutLog{MS: ms}, PriceStatus: ms.Criteria().Price.Status})
	}
	return out, nil
}
