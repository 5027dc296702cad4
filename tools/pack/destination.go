package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/scopehygiene/scope-hygiene/pack/mpp"
	"github.com/scopehygiene/scope-hygiene/pack/portability"
	"github.com/scopehygiene/scope-hygiene/server/sign"
)

// fileProfile reads a destination profile file (the DestinationProfile members, as JSON).
func fileProfile(path string) (*portability.DestinationProfile, error) {
	b, err := readBounded(path, 1<<20)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p portability.DestinationProfile
	if err := dec.Decode(&p); err != nil || p.Destination == "" {
		return nil, errors.New("--profile: not a destination profile (destination, profile_ref, supported, required_semantics, withdrawn, dry_run)")
	}
	return &p, nil
}

// serviceBodyLimit bounds what is read of a service's answer.
const serviceBodyLimit = 4 << 20

// serviceProfile builds the memory-scope-hygiene/v1 destination profile from a running
// service: its published criteria document (the profile) and its free pre-check of the member
// (the dry run, signature checked with the criteria document's key). No audit is run.
func serviceProfile(client *http.Client, base string, member []byte, memberName string) (*portability.DestinationProfile, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("--service is an http or https URL")
	}
	if member == nil {
		return nil, errors.New("the package has no such member")
	}
	svc := service{client: client, base: base}
	cb, err := svc.call(http.MethodGet, "/criteria", nil)
	if err != nil {
		return nil, err
	}
	p, key, err := criteriaProfile(cb)
	if err != nil {
		return nil, err
	}
	pb, err := svc.call(http.MethodPost, "/precheck", member)
	if err != nil {
		return nil, err
	}
	if _, err := sign.Verify(pb, key); err != nil {
		return nil, errors.New("POST /precheck: the answer's signature does not verify under the criteria document's key")
	}
	if p.DryRun, err = precheckDryRun(pb, memberName); err != nil {
		return nil, err
	}
	return p, nil
}

// service is a running scope-hygiene service asked for its free answers.
type service struct {
	client *http.Client
	base   string
}

// call sends one request with a JSON body (nil: none) and returns the 200 answer's body.
func (s service) call(method, path string, body []byte) ([]byte, error) {
	req, err := http.NewRequest(method, strings.TrimSuffix(s.base, "/")+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: the service did not answer", method, path)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, serviceBodyLimit))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: status %d", method, path, resp.StatusCode)
	}
	return b, nil
}

// criteriaProfile is the destination profile a criteria document (GET /criteria) states, and
// the key its reports are signed with.
func criteriaProfile(cb []byte) (*portability.DestinationProfile, ed25519.PublicKey, error) {
	var doc struct {
		ID       string                     `json:"criteria_id"`
		Revision string                     `json:"criteria_revision"`
		Digest   string                     `json:"criteria_digest"`
		Matrix   map[string]json.RawMessage `json:"assessability_matrix"`
		Key      sign.PublicKey             `json:"report_signing_key"`
	}
	if err := json.Unmarshal(cb, &doc); err != nil || doc.ID == "" {
		return nil, nil, errors.New("GET /criteria: not a criteria document")
	}
	key, err := doc.Key.Decode()
	if err != nil {
		return nil, nil, errors.New("GET /criteria: no usable report signing key")
	}
	p := &portability.DestinationProfile{Destination: doc.ID, ProfileRef: doc.Digest,
		Criteria: &portability.Pin{ID: doc.ID, Revision: doc.Revision, Digest: doc.Digest}, RecipientKeyID: mpp.KeyID(key),
		RequiredSemantics: []string{"submission:" + doc.ID}, Withdrawn: []string{}}
	for _, fam := range slices.Sorted(maps.Keys(doc.Matrix)) {
		p.Supported = append(p.Supported, portability.Representation{Family: fam})
	}
	return p, key, nil
}

// precheckDryRun is the dry run a signed pre-check answer (POST /precheck) gives on the member.
func precheckDryRun(pb []byte, memberName string) (*portability.DryRun, error) {
	var pc struct {
		Records int    `json:"records"`
		Family  string `json:"family"`
		Form    string `json:"form"`
		Variant string `json:"variant"`
		Factors map[string]struct {
			Status string `json:"status"`
			Reason string `json:"reason"`
		} `json:"factors"`
	}
	if err := json.Unmarshal(pb, &pc); err != nil {
		return nil, errors.New("POST /precheck: not a pre-check answer")
	}
	d := &portability.DryRun{Member: memberName, Records: pc.Records, Family: pc.Family, Form: pc.Form, Variant: pc.Variant}
	for _, n := range slices.Sorted(maps.Keys(pc.Factors)) {
		d.Findings = append(d.Findings, portability.Finding{Name: n, Status: pc.Factors[n].Status, Reason: pc.Factors[n].Reason})
	}
	return d, nil
}
