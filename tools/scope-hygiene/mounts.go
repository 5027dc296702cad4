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
		prefix, err := routePrefix(ms.Criteria().Endpoints)
		if err != nil {
			return nil, fmt.Errorf("criteria %s: %w", name, err)
		}
		out = append(out, api.Mount{Prefix: prefix, Criteria: ms, Document: doc,
			Engine: engine.MutLog{MS: ms}, PriceStatus: ms.Criteria().Price.Status})
	}
	return out, nil
}

// routePrefix reads a served criteria's routes from the endpoints it publishes ("POST
// /v1/forget-envelope/precheck (free, ...)"): its pre-check and audit must be POST routes under one
// prefix, so the routes served are the routes the criteria document states.
func routePrefix(endpoints map[string]string) (string, error) {
	route := func(op string) (string, error) {
		f := strings.Fields(endpoints[op])
		if len(f) < 2 || f[0] != "POST" || !strings.HasPrefix(f[1], "/") || !strings.HasSuffix(f[1], "/"+op) {
			return "", fmt.Errorf("endpoints.%s must read \"POST /<prefix>/%s ...\"", op, op)
		}
		return strings.TrimSuffix(f[1], "/"+op), nil
	}
	pre, err := route("precheck")
	if err != nil {
		return "", err
	}
	aud, err := route("audit")
	if err != nil {
		return "", err
	}
	if pre != aud || pre == "" {
		return "", fmt.Errorf("endpoints.precheck and endpoints.audit name different prefixes (%s, %s)", pre, aud)
	}
	return pre, nil
}
