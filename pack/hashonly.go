package pack

import (
	"bytes"
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

// markerKeys are the M1 marker members kept in metadata in hash-only form.
var markerKeys = []string{"shared", "sharing"}

// applyHashOnly replaces content_text with content_hash on every record. Unless keepMetadata,
// metadata is reduced to the M1 markers (shared, sharing), so no free text leaves.
func applyHashOnly(recs []Record, keepMetadata bool, inv *Inventory) {
	reduced := 0
	for _, r := range recs {
		if t, ok := r["content_text"].(string); ok {
			r["content_hash"] = HashContent(t)
			delete(r, "content_text")
			inv.derive("content_hash", "SHA-256 hex of the exact UTF-8 bytes of the content text, computed locally; content_text removed")
		}
		if keepMetadata {
			continue
		}
		raw, present := r["metadata"]
		if !present {
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
	if reduced > 0 {
		inv.count("hash_only_metadata_reduced_to_markers", reduced)
		inv.note("hash-only form: metadata was reduced to the M1 markers (shared, sharing) so that no free text leaves; pass --keep-metadata to submit it in full")
	}
}

func indent(b []byte) ([]byte, error) {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, fmt.Errorf("pack: indent: %w", err)
	}
	return out.Bytes(), nil
}
