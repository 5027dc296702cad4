package evaluator

import (
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// AppendCanonical appends the report's RFC 8785 (JCS) canonical form: the bytes that marshalling it
// with encoding/json and canonicalizing would give, written directly (members in JCS order,
// strings escaped as JCS does), so that signing a report does not parse what it just wrote. The
// tests hold it to the JCS reference on every report they make.
func (r *Report) AppendCanonical(b []byte) []byte {
	out, _ := r.AppendCanonicalPlaced(b, "")
	return out
}

// AppendCanonicalPlaced is AppendCanonical that also returns where a top-level member named
// member would go in JCS order: the offset of the comma before the first member that sorts after
// it (or of the closing brace), or just after the opening brace when it sorts first; -1 when the
// report has a member of that name. The signer splices its signature member there, so that
// signing never scans the bytes written for the place.
func (r *Report) AppendCanonicalPlaced(b []byte, member string) ([]byte, int) {
	w := jcsWriter{b: b, place: member, at: -1}
	if member == "" {
		w.placed = true
	}
	w.open('{')
	w.str("check_end", r.CheckEnd)
	w.key("coverage")
	r.Coverage.canonical(&w)
	w.str("criteria_digest", r.CriteriaDigest)
	w.str("criteria_id", r.CriteriaID)
	w.str("criteria_revision", r.CriteriaRevision)
	w.key("factors")
	r.Factors.canonical(&w)
	w.str("family", r.Family)
	w.str("form", r.Form)
	w.str("honesty_line", r.HonestyLine)
	w.str("kind", r.Kind)
	w.int("live", r.Live)
	w.str("op", r.Op)
	w.int("records", r.Records)
	w.str("scope_statement", r.ScopeStatement)
	w.str("service", r.Service)
	w.str("variant", r.Variant)
	w.str("verdict_line", r.VerdictLine)
	w.close('}')
	return w.b, w.at
}

func (c *Coverage) canonical(w *jcsWriter) {
	w.open('{')
	w.intp("b5_not_run", c.B5NotRun)
	w.int("contested", c.Contested)
	w.int("dangling_supersedes", c.DanglingSupersedes)
	w.int("eligible", c.Eligible)
	w.int("excluded_source_passages", c.ExcludedSourcePass)
	w.int("excluded_templates", c.ExcludedTemplates)
	if c.M3DeclaredAbsent != nil {
		w.key("m3_declared_absent")
		w.intMap(c.M3DeclaredAbsent)
	}
	w.int("manifest_ignored", c.ManifestIgnored)
	w.rate("marked_share", c.MarkedShare)
	w.int("non_string_scope_values", c.NonStringScopeValues)
	w.int("not_live", c.NotLive)
	w.key("scope_keys")
	w.strs(c.ScopeKeys)
	w.str("scope_keys_source", c.ScopeKeysSource)
	w.int("session_id_as_run_id", c.SessionIDAsRunID)
	w.int("split_state", c.SplitState)
	w.intp("template_lineage", c.TemplateLineage)
	w.close('}')
}

func (f *Factors) canonical(w *jcsWriter) {
	w.open('{')
	w.key("cross_scope_clusters")
	f.CrossScopeClusters.canonical(w)
	w.key("duplicates")
	f.Duplicates.canonical(w)
	w.key("scope_conflicts")
	f.ScopeConflicts.canonical(w)
	w.key("scope_presence")
	f.ScopePresence.canonical(w)
	w.key("unscoped_rate")
	f.UnscopedRate.canonical(w)
	w.close('}')
}

// canonical writes a rate; a nil rate is null (where it is not omitted).
func (r *Rate) canonical(w *jcsWriter) {
	if r == nil {
		w.raw("null")
		return
	}
	w.open('{')
	w.int("denominator", r.Denominator)
	w.int("numerator", r.Numerator)
	w.strOmitEmpty("reason", r.Reason)
	w.str("value", r.Value)
	w.close('}')
}

func (f *ScopePresence) canonical(w *jcsWriter) {
	w.open('{')
	w.intp("distinct_scopes", f.DistinctScopes)
	w.intp("eligible", f.Eligible)
	w.rate("rate", f.Rate)
	w.strOmitEmpty("reason", f.Reason)
	w.intp("scoped", f.Scoped)
	w.str("status", f.Status)
	w.close('}')
}

func (f *UnscopedRate) canonical(w *jcsWriter) {
	w.open('{')
	w.intp("eligible", f.Eligible)
	w.rate("rate", f.Rate)
	w.strOmitEmpty("reason", f.Reason)
	w.str("status", f.Status)
	w.intp("unscoped", f.Unscoped)
	w.close('}')
}

func (f *CrossScopeClusters) canonical(w *jcsWriter) {
	w.open('{')
	w.intp("ambiguous", f.Ambiguous)
	w.intp("candidate", f.Candidate)
	if f.Clusters != nil {
		w.key("clusters")
		if *f.Clusters == nil {
			w.raw("null")
		} else {
			w.open('[')
			for i := range *f.Clusters {
				w.elem()
				(*f.Clusters)[i].canonical(w)
			}
			w.close(']')
		}
	}
	w.rate("marked_share", f.MarkedShare)
	w.intp("marked_shared", f.MarkedShared)
	w.strOmitEmpty("reason", f.Reason)
	w.str("status", f.Status)
	w.intp("template_lineage", f.TemplateLineage)
	w.intp("undeclared", f.Undeclared)
	w.close('}')
}

func (c *ClusterReport) canonical(w *jcsWriter) {
	w.open('{')
	w.str("classification", c.Classification)
	w.int("cluster", c.Cluster)
	w.str("decided_by", c.DecidedBy)
	w.int("distinct_scopes", c.DistinctScopes)
	w.intp("distinct_sources", c.DistinctSources)
	w.key("members")
	if c.Members == nil {
		w.raw("null")
	} else {
		w.open('[')
		for i := range c.Members {
			w.elem()
			w.b = c.Members[i].appendCanonical(w.b)
		}
		w.close(']')
	}
	w.strOmitEmpty("reason", c.Reason)
	w.str("statement", c.Statement)
	w.close('}')
}

// appendCanonical writes a cluster member, the report's most repeated object (one per member of
// every cluster), with its member names and punctuation as constants: the bytes the writer's
// open, bool, str and close would give.
func (m *Member) appendCanonical(b []byte) []byte {
	b = append(b, `{"covered":`...)
	b = appendBool(b, m.Covered)
	b = append(b, `,"global":`...)
	b = appendBool(b, m.Global)
	b = append(b, `,"id":`...)
	b = appendJCSString(b, m.ID)
	b = append(b, `,"scope":`...)
	b = appendJCSString(b, m.Scope)
	return append(b, '}')
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

func (f *ScopeConflicts) canonical(w *jcsWriter) {
	w.open('{')
	if len(f.BySubcheck) > 0 {
		w.key("by_subcheck")
		w.intMap(f.BySubcheck)
	}
	w.intp("conflicts", f.Conflicts)
	w.strOmitEmpty("reason", f.Reason)
	if len(f.Records) > 0 {
		w.key("records")
		w.open('{')
		for _, k := range sortedKeys(f.Records) {
			w.dataKey(k)
			w.strs(f.Records[k])
		}
		w.close('}')
	}
	if f.Referrals != nil {
		w.key("referrals")
		w.strs(*f.Referrals)
	}
	w.str("status", f.Status)
	w.close('}')
}

func (f *Duplicates) canonical(w *jcsWriter) {
	w.open('{')
	if f.Clusters != nil {
		w.key("clusters")
		if *f.Clusters == nil {
			w.raw("null")
		} else {
			w.open('[')
			for i := range *f.Clusters {
				d := &(*f.Clusters)[i]
				w.elem()
				w.open('{')
				w.int("cluster", d.Cluster)
				w.int("count", d.Count)
				w.key("members")
				w.strs(d.Members)
				w.str("partition", d.Partition)
				w.str("scope", d.Scope)
				w.close('}')
			}
			w.close(']')
		}
	}
	w.intp("excess", f.Excess)
	w.intp("live", f.Live)
	w.rate("rate", f.Rate)
	w.strOmitEmpty("reason", f.Reason)
	w.str("status", f.Status)
	w.close('}')
}

// jcsWriter writes JCS text: the caller names members in JCS order (by UTF-16 code units), and
// the writer places the commas.
type jcsWriter struct {
	b     []byte
	first bool // no member or element written yet in the innermost container
	depth int  // containers open
	// place names a top-level member whose place is wanted (AppendCanonicalPlaced); at is that
	// place once placed is set (-1: the object has a member of that name).
	place  string
	at     int
	placed bool
}

func (w *jcsWriter) open(c byte) { w.b, w.first, w.depth = append(w.b, c), true, w.depth+1 }

func (w *jcsWriter) close(c byte) {
	if w.depth == 1 && !w.placed { // every member sorts before it
		w.at, w.placed = len(w.b), true
	}
	w.b, w.first, w.depth = append(w.b, c), false, w.depth-1
}

// elem starts an array element.
func (w *jcsWriter) elem() {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
}

// key starts an object member whose name is one of the report's own, a Go constant: plain ASCII
// that JCS writes as it is, so it is copied without the escaping scan (TestReportCanonicalIsJCS
// would catch a name that needed one). A name that comes from data goes through dataKey.
func (w *jcsWriter) key(name string) {
	if w.depth == 1 && !w.placed {
		if c := compareUTF16(name, w.place); c >= 0 {
			w.at, w.placed = len(w.b), true
			if c == 0 {
				w.at = -1
			}
		}
	}
	w.elem()
	w.b = append(w.b, '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, '"', ':')
}

// dataKey starts an object member whose name comes from the export or the criteria: escaped as
// JCS does.
func (w *jcsWriter) dataKey(name string) {
	w.elem()
	w.b = appendJCSString(w.b, name)
	w.b = append(w.b, ':')
}

func (w *jcsWriter) raw(s string) { w.b = append(w.b, s...) }

func (w *jcsWriter) str(name, v string) {
	w.key(name)
	w.b = appendJCSString(w.b, v)
}

func (w *jcsWriter) strOmitEmpty(name, v string) {
	if v != "" {
		w.str(name, v)
	}
}

func (w *jcsWriter) int(name string, v int) {
	w.key(name)
	w.b = strconv.AppendInt(w.b, int64(v), 10)
}

func (w *jcsWriter) intp(name string, v *int) {
	if v != nil {
		w.int(name, *v)
	}
}

// rate writes a rate member, omitted when the rate is nil.
func (w *jcsWriter) rate(name string, r *Rate) {
	if r != nil {
		w.key(name)
		r.canonical(w)
	}
}

func (w *jcsWriter) strs(ss []string) {
	if ss == nil {
		w.raw("null")
		return
	}
	w.open('[')
	for _, s := range ss {
		w.elem()
		w.b = appendJCSString(w.b, s)
	}
	w.close(']')
}

func (w *jcsWriter) intMap(m map[string]int) {
	if m == nil {
		w.raw("null")
		return
	}
	w.open('{')
	for _, k := range sortedKeys(m) {
		w.dataKey(k)
		w.b = strconv.AppendInt(w.b, int64(m[k]), 10)
	}
	w.close('}')
}

// sortedKeys are a map's keys in JCS order (UTF-16 code units).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareUTF16)
	return keys
}

func compareUTF16(a, b string) int {
	// Up to their first differing byte the strings share whole runes, so that byte starts a rune
	// in both, or continues the same one. Where either is ASCII, its UTF-16 unit orders as the
	// byte does (an ASCII unit is below any other); otherwise the runes from there decide.
	i, n := 0, min(len(a), len(b))
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return len(a) - len(b)
	}
	if a[i] < utf8.RuneSelf || b[i] < utf8.RuneSelf {
		return int(a[i]) - int(b[i])
	}
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	a, b = a[i:], b[i:]
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := utf16Units(ra), utf16Units(rb)
			for i := 0; i < len(ua) && i < len(ub); i++ {
				if ua[i] != ub[i] {
					return int(ua[i]) - int(ub[i])
				}
			}
			return len(ua) - len(ub)
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

func utf16Units(r rune) []uint16 {
	if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError || r2 != utf8.RuneError {
		return []uint16{uint16(r1), uint16(r2)}
	}
	return []uint16{uint16(r)}
}

// jcsEscaped marks the bytes JCS escapes in a string: quote, backslash and the control characters
// (one load per byte where three comparisons were).
var jcsEscaped = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// appendJCSString writes s as JCS does (ECMAScript JSON.stringify): quote, backslash and the
// control characters escaped (the short forms where they exist, else \u00xx), everything else as
// it is. s is valid UTF-8 (every string of a result comes from a validated body or the criteria).
func appendJCSString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !jcsEscaped[c] {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
