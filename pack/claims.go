package pack

import "fmt"

// buildClaims passes claim records through unchanged (the generic family's own format): each line
// is one flat record with a string id and content_text (or, already hashed, content_hash).
// record_class defaults to "claim".
func buildClaims(in Inputs, inv *Inventory) ([]Record, error) {
	var recs []Record
	for _, f := range in.Records {
		items, env, err := readItems(f, "records")
		if err != nil {
			return nil, err
		}
		for i, it := range items {
			if id, ok := str(it, "id"); !ok || id == "" {
				return nil, fmt.Errorf("pack: %s: claim %d: id missing or not a string", f.Name, i)
			}
			_, text := str(it, "content_text")
			h, hash := str(it, "content_hash")
			if !text && !(hash && h != "") {
				return nil, fmt.Errorf("pack: %s: claim %d: content_text missing or not a string", f.Name, i)
			}
			rec := Record{}
			for k, v := range it {
				rec[k] = v
			}
			if _, ok := rec["record_class"]; !ok {
				rec["record_class"] = "claim"
				inv.derive("record_class", "defaulted to \"claim\" where the line carries none")
			}
			recs = append(recs, rec)
			inv.from(rec["id"].(string), f.Name, env.Locs[i])
		}
	}
	inv.note("claim lines are passed through unchanged; scope keys count only when declared (--declared-scope-keys), per the extension rule")
	return recs, nil
}

// checkClaimsForm refuses a full-text pack of lines that carry only a content_hash.
func checkClaimsForm(recs []Record, hashOnly bool) error {
	if hashOnly {
		return nil
	}
	for i, r := range recs {
		if _, ok := r["content_text"].(string); !ok {
			return fmt.Errorf("pack: claim record %d carries only content_hash: pack it with --hash-only", i)
		}
	}
	return nil
}
