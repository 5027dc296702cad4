package gen

// manifestView is the part of the manifest the rules read.
type manifestView struct {
	globalScopes      []string // string entries, in order (M3-a)
	globalContentKeys []string // M3-b
	globalClaimIDs    []string // M3-c
	privateScopes     []string
	scopeFiltered     bool
	multiScope        bool
	ignored           int
}

func (m manifestView) inGlobalScopes(s string) bool      { return contains(m.globalScopes, s) }
func (m manifestView) inGlobalContentKeys(s string) bool { return contains(m.globalContentKeys, s) }
func (m manifestView) inGlobalClaimIDs(s string) bool    { return contains(m.globalClaimIDs, s) }
func (m manifestView) inPrivateScopes(s string) bool     { return contains(m.privateScopes, s) }

// readManifest reads the optional manifest members: lists count only as arrays and
// only their string entries count; flags count only as JSON true. What is ignored
// is counted.
func readManifest(man map[string]any) manifestView {
	var m manifestView
	if man == nil {
		return m
	}
	list := func(name string) []string {
		raw, present := man[name]
		if !present || raw == nil {
			return nil
		}
		arr, ok := raw.([]any)
		if !ok {
			m.ignored++
			return nil
		}
		var out []string
		for _, e := range arr {
			s, ok := e.(string)
			if !ok {
				m.ignored++
				continue
			}
			out = append(out, s)
		}
		return out
	}
	m.globalScopes = list("global_scopes")
	m.globalContentKeys = list("global_content_keys")
	m.globalClaimIDs = list("global_claim_ids")
	m.privateScopes = list("private_scopes")
	flag := func(name string) bool {
		raw, present := man[name]
		if !present || raw == nil {
			return false
		}
		b, ok := raw.(bool)
		if !ok {
			m.ignored++
			return false
		}
		return b
	}
	m.scopeFiltered = flag("scope_filtered")
	m.multiScope = flag("multi_scope")
	return m
}
