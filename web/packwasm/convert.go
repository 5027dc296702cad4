// Command packwasm is the web page's local converter: package pack and the key-free half of
// sign.Verify compiled to WebAssembly (GOOS=js GOARCH=wasm), so what the page builds in the
// browser is, by construction, what `pack` builds and what `scope-hygiene verify` checks. It
// also masks a mutation log for the second rule set's private pre-check (web/internal/logmask).
//
// The conversion and the message extraction live in this file, which builds on every platform
// so that ordinary tests compare them with `pack` directly; main_js.go only wires them to
// JavaScript. Errors are pack's and sign's static messages: they name files, indices and counts,
// never any part of an export.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/scopehygiene/scope-hygiene/pack"
	"github.com/scopehygiene/scope-hygiene/server/sign"
)

// SourceSubmission is the page's name for an export already in the submission form (the body
// the API accepts). Every other source name is one of pack.Sources.
const SourceSubmission = "submission"

// Packed is one conversion: the exact body the page would send and what pack says about it.
type Packed struct {
	Body      []byte
	Records   int
	Form      string
	Inventory *pack.Inventory
}

// convert turns one file into the body to send. A native dump goes through pack.Pack with its
// source. A submission goes through pack's claim path (the one place pack passes flat records
// through) with its manifest restated as pack options; a family other than generic then takes
// back its own name and variant, and loses the record_class that path defaults.
func convert(source, name string, data []byte, hashOnly bool) (*Packed, error) {
	if source != SourceSubmission {
		res, err := pack.Pack(pack.Inputs{Records: []pack.File{{Name: name, Data: data}}}, pack.Options{Source: pack.Source(source), HashOnly: hashOnly})
		if err != nil {
			return nil, err
		}
		return finish(res)
	}
	var in struct {
		Family   *string           `json:"family"`
		Form     *string           `json:"form"`
		Variant  *string           `json:"variant"`
		Manifest json.RawMessage   `json:"manifest"`
		Records  []json.RawMessage `json:"records"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, errors.New("the submission is not a JSON object with family, form and records")
	}
	if in.Family == nil || in.Form == nil || in.Records == nil {
		return nil, errors.New("the submission needs family, form and records")
	}
	classless := make([]bool, len(in.Records))
	for i, r := range in.Records {
		var probe map[string]json.RawMessage
		if json.Unmarshal(r, &probe) != nil {
			return nil, fmt.Errorf("record %d is not a JSON object", i)
		}
		_, has := probe["record_class"]
		classless[i] = !has
	}
	opt := pack.Options{Source: pack.ClaimsJSONL, HashOnly: hashOnly}
	if len(in.Manifest) > 0 && string(in.Manifest) != "null" {
		if err := manifestOptions(in.Manifest, *in.Form == pack.FormHashOnly, &opt.Manifest); err != nil {
			return nil, err
		}
	}
	res, err := pack.Pack(pack.Inputs{Records: []pack.File{{Name: name, Data: data}}}, opt)
	if err != nil {
		return nil, err
	}
	sub := res.Submission
	if len(sub.Records) != len(classless) {
		return nil, errors.New("pack returned a different number of records")
	}
	// For the generic family the claim path is pack's own conversion, defaults included. Another
	// family takes back its name, drops the claim variant and the claim class pack defaulted.
	if *in.Family != sub.Family {
		sub.Family, sub.Variant = *in.Family, ""
		for i, r := range sub.Records {
			if classless[i] {
				delete(r, "record_class")
			}
		}
	}
	if in.Variant != nil {
		sub.Variant = *in.Variant
	}
	res.Inventory.Family, res.Inventory.Variant = sub.Family, sub.Variant
	return finish(res)
}

func finish(res *pack.Result) (*Packed, error) {
	body, err := res.Submission.Marshal()
	if err != nil {
		return nil, err
	}
	if err := pack.CheckCaps(len(res.Submission.Records), body); err != nil {
		return nil, err
	}
	return &Packed{Body: body, Records: len(res.Submission.Records), Form: res.Submission.Form, Inventory: res.Inventory}, nil
}

// manifestOptions restates a submission's manifest as pack options, refusing members pack does
// not carry (so nothing the caller declared is dropped silently).
func manifestOptions(raw json.RawMessage, hashed bool, m *pack.ManifestOptions) error {
	var mf map[string]json.RawMessage
	if err := json.Unmarshal(raw, &mf); err != nil {
		return errors.New("the manifest is not a JSON object")
	}
	for k, v := range mf {
		var err error
		switch k {
		case "declared_scope_keys":
			m.DeclaredSet = true
			err = json.Unmarshal(v, &m.DeclaredScopeKeys)
		case "global_scopes":
			err = json.Unmarshal(v, &m.GlobalScopes)
		case "global_content_keys":
			if hashed {
				err = json.Unmarshal(v, &m.GlobalContentHashes)
			} else {
				err = json.Unmarshal(v, &m.GlobalContentKeys)
			}
		case "global_claim_ids":
			err = json.Unmarshal(v, &m.GlobalClaimIDs)
		case "private_scopes":
			err = json.Unmarshal(v, &m.PrivateScopes)
		case "scope_filtered":
			err = json.Unmarshal(v, &m.ScopeFiltered)
		case "multi_scope":
			err = json.Unmarshal(v, &m.MultiScope)
		default:
			return errors.New("the manifest has a member pack does not carry; pack it with the pack command")
		}
		if err != nil {
			return fmt.Errorf("manifest member %s has the wrong type", k) // k is one of the names above
		}
	}
	return nil
}

// Checked is what the page needs to verify a signed result with WebCrypto: the signed message
// and signature sign.Verify would check, and the key id the result names.
type Checked struct {
	KeyID     string
	Message   []byte
	Signature []byte
}

// signedMessage runs sign.Message on the exact bytes of a saved result.
func signedMessage(doc []byte) (*Checked, error) {
	b, msg, sig, err := sign.Message(doc)
	if err != nil {
		return nil, err
	}
	return &Checked{KeyID: b.KeyID, Message: msg, Signature: sig}, nil
}

// publishedKey decodes the key /criteria publishes (alg, key id and key checked together).
func publishedKey(criteria []byte) ([]byte, string, error) {
	var doc struct {
		Key *sign.PublicKey `json:"report_signing_key"`
	}
	if err := json.NewDecoder(bytes.NewReader(criteria)).Decode(&doc); err != nil || doc.Key == nil {
		return nil, "", errors.New("the criteria document publishes no report_signing_key")
	}
	pub, err := doc.Key.Decode()
	if err != nil {
		return nil, "", err
	}
	return pub, doc.Key.KeyID, nil
}
