package pack

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// HashContent is the content_hash of a text: the lowercase hex SHA-256 of its exact UTF-8 bytes.
// It is computed on the caller's machine; the text itself never leaves.
func HashContent(text string) string {
	s := sha256.Sum256([]byte(text))
	return hex.EncodeToString(s[:])
}

// HashSource is the keyed digest that replaces a source value under Options.HashSourceKey: the
// lowercase hex HMAC-SHA-256 of the value's UTF-8 bytes under the key. Equal sources stay equal
// (B5 compares them); the text is gone and, without the key, cannot be guessed by trying names.
func HashSource(key []byte, source string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(source))
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil))
}

// markerKeys are the M1 marker members kept in metadata in hash-only form.
var markerKeys = []string{"shared", "sharing"}

// hashOnlyKept are the record fields a hash-only submission carries: the id, the content hash
// and the published non-content fields the audit reads (scope keys of every family and scope
// fields, liveness fields, markers and pointers, source, classes). Every other field is dropped.
// The manifest's declared scope keys are kept as well (the generic family names its own).
var hashOnlyKept = map[string]bool{
	"id": true, "content_hash": true, "record_class": true,
	// scope keys of the families and the published scope fields
	"user_id": true, "agent_id": true, "app_id": true, "run_id": true, "session_id": true,
	"group_id": true, "graph_id": true, "scope": true, "attached_to": true,
	"attributed_scope": true, "storage_scope": true, "history_scope": true,
	"episode_group_ids": true, "endpoint_group_ids": true,
	// markers and pointers
	"shared": true, "sharing": true, "origin_claim_id": true, "origin_scope": true, "source": true,
	"supersedes": true, "replaced_by": true, "superseded_by": true,
	// liveness
	"is_deleted": true, "invalid_at": true, "expired_at": true, "lifecycle_state": true, "state": true,
	// classes
	"is_template": true, "template_id": true, "base_template_id": true, "file_id": true, "source_passage": true,
}

// applyHashOnly replaces content_text with content_hash on every record and drops every field
// the audit does not read (counted per field in the inventory). Unless keepMetadata, metadata is
// reduced to the M1 markers (shared, sharing). With a source key, each source value is replaced
// by its keyed digest.
func applyHashOnly(recs []Record, opt Options, inv *Inventory) {
	kept := map[string]bool{}
	for k := range hashOnlyKept {
		kept[k] = true
	}
	if opt.Manifest.DeclaredSet {
		for _, k := range opt.Manifest.DeclaredScopeKeys {
			kept[k] = true
		}
	}
	reduced, metaKept, sourced := 0, 0, 0
	if !opt.KeepMetadata {
		// metadata is reduced to the markers below: no native member stays under _native
		clear(inv.kept)
	}
	for _, r := range recs {
		if t, ok := r["content_text"].(string); ok {
			r["content_hash"] = HashContent(t)
			delete(r, "content_text")
			inv.derive("content_hash", "SHA-256 hex of the exact UTF-8 bytes of the content text, computed locally; content_text removed")
		}
		for k := range r {
			if k == "metadata" || kept[k] {
				continue
			}
			delete(r, k)
			inv.hashOnlyDrop(k)
		}
		if s, ok := r["source"].(string); ok && opt.HashSourceKey != nil {
			r["source"] = HashSource(opt.HashSourceKey, s)
			sourced++
		}
		raw, present := r["metadata"]
		if !present {
			continue
		}
		if opt.KeepMetadata {
			metaKept++
			continue
		}
		md, ok := raw.(map[string]any)
		if !ok {
			delete(r, "metadata")
			reduced++
			continue
		}
		keep := map[string]any{}
		for _, k := range markerKeys {
			if v, ok := md[k]; ok {
				keep[k] = v
			}
		}
		if len(keep) != len(md) {
			reduced++
		}
		if len(keep) == 0 {
			delete(r, "metadata")
		} else {
			r["metadata"] = keep
		}
	}
	if len(inv.HashOnlyDropped) > 0 {
		inv.note("hash-only form: every record field the audit does not read was dropped (hash_only_fields_dropped counts them per field)")
	}
	if reduced > 0 {
		inv.count("hash_only_metadata_reduced_to_markers", reduced)
		inv.note("hash-only form: metadata was reduced to the M1 markers (shared, sharing) so that no free text leaves; pass --keep-metadata to submit it in full")
	}
	if metaKept > 0 {
		inv.count("hash_only_metadata_kept_in_full (--keep-metadata)", metaKept)
		inv.note("hash-only form with --keep-metadata: metadata was submitted in full and MAY CARRY FREE TEXT out of this machine")
	}
	inv.SourceValues = "as submitted (B5 compares source values)"
	if opt.HashSourceKey != nil {
		inv.SourceValues = "replaced by HMAC-SHA-256 under the caller's key (--hash-source): equality kept, text gone"
		inv.count("hash_only_source_values_keyed", sourced)
	}
}

func indent(b []byte) ([]byte, error) {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, fmt.Errorf("pack: indent: %w", err)
	}
	return out.Bytes(), nil
}
