package gen

// edgeCases computes the hand-authored cases (provenance "synthetic edge case").
func edgeCases() ([]Case, error) {
	var specs []edgeSpec
	specs = append(specs, strictJSONSpecs()...)
	specs = append(specs, familyFormSpecs()...)
	specs = append(specs, recordSpecs()...)
	specs = append(specs, contentSpecs()...)
	specs = append(specs, manifestSpecs()...)
	specs = append(specs, capSpecs()...)
	specs = append(specs, matrixSpecs()...)
	specs = append(specs, matrixGateSpecs()...)
	specs = append(specs, gateSpecs()...)
	specs = append(specs, scopeSpecs()...)
	specs = append(specs, livenessSpecs()...)
	specs = append(specs, markerSpecs()...)
	specs = append(specs, m4Specs()...)
	specs = append(specs, precedenceSpecs()...)
	specs = append(specs, lettaSpecs()...)
	specs = append(specs, conflictSpecs()...)
	specs = append(specs, duplicateSpecs()...)
	specs = append(specs, percentSpecs()...)
	specs = append(specs, regressionSpecs()...)
	var out []Case
	for _, s := range specs {
		var c Case
		var err error
		prov := s.provenance
		if prov == "" {
			prov = ProvenanceEdge
		}
		if s.raw != nil {
			c, err = makeCase(s.name, prov, s.rules, s.raw, true)
		} else {
			c, err = makeCase(s.name, prov, s.rules, bytesOf(s.body), false)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
