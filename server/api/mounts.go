package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/scopehygiene/scope-hygiene/server/freetier"
	"github.com/scopehygiene/scope-hygiene/server/store"
)

// Mount is a further criteria served beside the primary one, at its own routes
// (docs/forget-envelope.md): POST <Prefix>/precheck, POST <Prefix>/audit and its document at
// GET /criteria/<criteria id>. It shares the primary's store, signer, metrics, limits and
// sign-in-with-x prover; its free allowance is its own (counted per criteria id).
type Mount struct {
	// Prefix is the routes' prefix, e.g. /v1/forget-envelope.
	Prefix   string
	Criteria Criteria
	// Document is its published criteria document (the server adds digest and signing key).
	Document map[string]any
	Engine   Engine
	// PriceStatus is the price's published status (UNPRICED for a rule set served free).
	PriceStatus string
	// Payments gates its /audit when it is priced (NoPayments when nil). An unpriced criteria
	// (PriceUnits 0) is served free under its pre-check's allowance, and no payment is asked.
	Payments Payments
}

// CriteriaIndexEntry is one criteria of GET /criteria/index.
type CriteriaIndexEntry struct {
	CriteriaID       string `json:"criteria_id"`
	CriteriaRevision string `json:"criteria_revision"`
	CriteriaDigest   string `json:"criteria_digest"`
	Document         string `json:"document"`
	Precheck         string `json:"precheck"`
	Audit            string `json:"audit"`
	Price            Price  `json:"price"`
}

// docRoute is the document route of a criteria id.
func docRoute(id string) string { return "/criteria/" + id }

// mount serves every Mount beside the primary criteria and GET /criteria/index. A mount's free
// calls stay out of the primary's free-against-paid tripwire (its kill line is the primary's).
func (s *Server) mount(e *echo.Echo, get func(string, echo.HandlerFunc)) error {
	index := []CriteriaIndexEntry{{CriteriaID: s.cfg.Criteria.ID(), CriteriaRevision: s.cfg.Criteria.Revision(),
		CriteriaDigest: s.cfg.Criteria.Digest(), Document: docRoute(s.cfg.Criteria.ID()), Precheck: "/precheck", Audit: "/audit",
		Price: Price{USDCUnits: s.cfg.Criteria.PriceUnits(), Label: s.cfg.Criteria.PriceLabel(), Status: s.cfg.PriceStatus}}}
	const getMethods, postMethods = "GET, HEAD, OPTIONS", "POST, OPTIONS"
	s.mounted = map[string]string{"/criteria/index": getMethods, docRoute(s.cfg.Criteria.ID()): getMethods}
	get(docRoute(s.cfg.Criteria.ID()), s.getCriteria)
	seen := map[string]bool{s.cfg.Criteria.ID(): true}
	for _, m := range s.cfg.Mounts {
		if m.Criteria == nil || m.Engine == nil || !strings.HasPrefix(m.Prefix, "/") || strings.HasSuffix(m.Prefix, "/") {
			return errors.New("api: a mount needs Criteria, Engine and a prefix like /v1/name")
		}
		if seen[m.Criteria.ID()] {
			return errors.New("api: a criteria id is served twice")
		}
		seen[m.Criteria.ID()] = true
		cfg := s.cfg
		cfg.Criteria, cfg.Document, cfg.Engine, cfg.PriceStatus, cfg.Mounts = m.Criteria, m.Document, m.Engine, m.PriceStatus, nil
		cfg.Payments = m.Payments
		if cfg.Payments == nil || m.Criteria.PriceUnits() == 0 {
			cfg.Payments = NoPayments{}
		}
		perDay, minInterval := m.Criteria.FreeTier()
		// A mount shares everything the primary holds (readiness, limits, budgets, the prover,
		// the evaluation slots) but its criteria, its document and its free allowance: copying the
		// whole server keeps a field added later shared too, instead of silently zero.
		sub := new(Server)
		*sub = *s
		sub.cfg, sub.mounted, sub.criteria, sub.etag = cfg, nil, nil, ""
		sub.gate = &freetier.Gate{Store: cfg.Store, Limits: store.FreeLimits{PerDay: perDay, MinInterval: minInterval, Uncounted: true}, Now: cfg.Now, Scope: m.Criteria.ID()}
		if err := sub.renderCriteria(); err != nil {
			return err
		}
		get(docRoute(m.Criteria.ID()), sub.getCriteria)
		s.mounted[docRoute(m.Criteria.ID())] = getMethods
		s.mounted[m.Prefix+"/precheck"], s.mounted[m.Prefix+"/audit"] = postMethods, postMethods
		e.POST(m.Prefix+"/precheck", sub.precheck, s.shedPrecheck)
		if m.Criteria.PriceUnits() == 0 {
			e.POST(m.Prefix+"/audit", sub.freeAudit, s.shedAudit)
		} else {
			e.POST(m.Prefix+"/audit", sub.audit, s.shedAudit)
		}
		index = append(index, CriteriaIndexEntry{CriteriaID: m.Criteria.ID(), CriteriaRevision: m.Criteria.Revision(),
			CriteriaDigest: m.Criteria.Digest(), Document: docRoute(m.Criteria.ID()), Precheck: m.Prefix + "/precheck",
			Audit: m.Prefix + "/audit", Price: Price{USDCUnits: m.Criteria.PriceUnits(), Label: m.Criteria.PriceLabel(), Status: m.PriceStatus}})
	}
	body := map[string]any{"kind": "criteria_index", "criteria": index}
	get("/criteria/index", func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "public, max-age=300")
		return c.JSON(http.StatusOK, body)
	})
	return nil
}
