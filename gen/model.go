package gen

// analysis holds everything derived from one validated submission.
type analysis struct {
	v     *validated
	letta bool

	keys       []string
	keysSource string

	n     int
	ids   []string
	byID  map[string]int
	ckey  []string // content key: content_text (full_text) or content_hash (hash_only)
	scope []recordScope

	// Letta record classes; always false for other families.
	template      []bool
	sourcePassage []bool
	eligible      []bool

	// liveness (live.go)
	live       []bool
	contested  []bool
	splitState int
	dangling   int

	// manifest (manifest.go)
	man manifestView

	// markers (markers.go)
	m1        []bool
	n4        []bool
	n3        []bool
	n2        []bool
	m4        []bool
	covered   []bool // live, scoped, and covered by any marker
	sizeOfKey map[string]int
}

// analyse derives the per-record facts of a validated submission.
func analyse(v *validated) *analysis {
	a := &analysis{v: v, letta: v.family == "letta", n: len(v.records), byID: map[string]int{}}
	var standIn bool
	a.keys, a.keysSource, standIn = scopeKeys(v)

	a.ids = make([]string, a.n)
	a.ckey = make([]string, a.n)
	a.scope = make([]recordScope, a.n)
	a.template = make([]bool, a.n)
	a.sourcePassage = make([]bool, a.n)
	a.eligible = make([]bool, a.n)
	for i, r := range v.records {
		a.ids[i] = r["id"].(string)
		a.byID[a.ids[i]] = i
		if v.form == "full_text" {
			a.ckey[i] = r["content_text"].(string)
		} else {
			a.ckey[i] = r["content_hash"].(string)
		}
		if a.letta {
			a.scope[i] = lettaScope(r)
			a.template[i] = isTrue(r["is_template"])
			// A record that is both is counted once, as a template.
			a.sourcePassage[i] = !a.template[i] &&
				(isTrue(r["source_passage"]) || (isSet(r["file_id"]) && !a.scope[i].has))
		} else {
			a.scope[i] = tupleScope(r, a.keys, standIn)
		}
		a.eligible[i] = !a.template[i] && !a.sourcePassage[i]
	}
	a.man = readManifest(v.manifest)
	computeLiveness(a)
	computeMarkers(a)
	return a
}
