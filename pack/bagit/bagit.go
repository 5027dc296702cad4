// Package bagit writes and validates RFC 8493 bags (BagIt 1.0) in memory, so a Memory
// Portability Package can also travel as a bag that BagIt tools recognise. Files are given and
// returned as a map from slash-separated path to bytes; the caller does the I/O.
package bagit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The bag's fixed names (RFC 8493 sections 2.1 and 2.2).
const (
	Declaration  = "bagit.txt"
	PayloadDir   = "data"
	Manifest     = "manifest-sha256.txt"
	TagManifest  = "tagmanifest-sha256.txt"
	BagInfo      = "bag-info.txt"
	declaration  = "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"
	payloadSlash = PayloadDir + "/"
)

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// encodePath percent-encodes what a manifest line cannot carry in a file path (section 2.1.3).
func encodePath(p string) string {
	return strings.NewReplacer("%", "%25", "\n", "%0A", "\r", "%0D").Replace(p)
}

func decodePath(p string) string {
	return strings.NewReplacer("%0A", "\n", "%0a", "\n", "%0D", "\r", "%0d", "\r", "%25", "%").Replace(p)
}

// Bag returns the files of a bag whose payload is payload (each path relative to data/): the
// declaration, the payload under data/, a SHA-256 payload manifest, bag-info.txt with info and
// the Payload-Oxum, and a SHA-256 tag manifest of the tag files.
func Bag(payload map[string][]byte, info map[string]string) (map[string][]byte, error) {
	out := map[string][]byte{Declaration: []byte(declaration)}
	names := make([]string, 0, len(payload))
	for n := range payload {
		if n == "" || strings.Contains(n, "\\") || !path.IsAbs("/"+n) || path.Clean(n) != n || strings.HasPrefix(n, "../") {
			return nil, errors.New("bagit: a payload path is not a clean relative path")
		}
		names = append(names, n)
	}
	sort.Strings(names)
	var man bytes.Buffer
	octets := 0
	for _, n := range names {
		out[payloadSlash+n] = payload[n]
		octets += len(payload[n])
		fmt.Fprintf(&man, "%s  %s\n", sum(payload[n]), encodePath(payloadSlash+n))
	}
	out[Manifest] = man.Bytes()
	var bi bytes.Buffer
	keys := make([]string, 0, len(info))
	for k := range info {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.ContainsAny(k, ":\r\n") || strings.ContainsAny(info[k], "\r\n") {
			return nil, errors.New("bagit: a bag-info label or value holds a colon or a line break")
		}
		fmt.Fprintf(&bi, "%s: %s\n", k, info[k])
	}
	fmt.Fprintf(&bi, "Payload-Oxum: %d.%d\n", octets, len(names))
	out[BagInfo] = bi.Bytes()
	var tm bytes.Buffer
	for _, n := range []string{BagInfo, Declaration, Manifest} {
		fmt.Fprintf(&tm, "%s  %s\n", sum(out[n]), n)
	}
	out[TagManifest] = tm.Bytes()
	return out, nil
}

var (
	versionLine  = regexp.MustCompile(`^BagIt-Version: ([0-9]+)\.([0-9]+)$`)
	encodingLine = regexp.MustCompile(`^Tag-File-Character-Encoding: (\S+)$`)
	manifestName = regexp.MustCompile(`^(tag)?manifest-([a-z0-9]+)\.txt$`)
	oxum         = regexp.MustCompile(`^([0-9]+)\.([0-9]+)$`)
)

// Validate checks files (every file of a bag, by slash path from the bag's root) against RFC
// 8493: a complete bag (section 3: declaration, payload directory, a payload manifest listing
// every payload file, every listed file present, Payload-Oxum when given) and a valid one (every
// checksum of every payload and tag manifest matches, for the algorithms it can compute:
// sha256). It returns every problem found; none means valid.
func Validate(files map[string][]byte) []string {
	var probs []string
	bad := func(f string, a ...any) { probs = append(probs, fmt.Sprintf(f, a...)) }
	decl, ok := files[Declaration]
	if !ok {
		return []string{"bagit.txt is missing (section 2.1.1)"}
	}
	lines := strings.Split(strings.TrimSuffix(string(bytes.TrimPrefix(decl, []byte("\xef\xbb\xbf"))), "\n"), "\n")
	if bytes.HasPrefix(decl, []byte("\xef\xbb\xbf")) {
		bad("bagit.txt begins with a byte order mark (section 2.1.1 forbids it)")
	}
	if len(lines) != 2 || !versionLine.MatchString(strings.TrimSuffix(lines[0], "\r")) || !encodingLine.MatchString(strings.TrimSuffix(lines[1], "\r")) {
		bad("bagit.txt is not exactly the two lines BagIt-Version: M.N and Tag-File-Character-Encoding: ENCODING (section 2.1.1)")
	}
	payload := map[string]bool{}
	tags := map[string]bool{}
	for p := range files {
		if strings.HasPrefix(p, payloadSlash) {
			payload[p] = true
		} else {
			tags[p] = true
		}
	}
	if len(payload) == 0 {
		bad("the payload directory data/ is missing or empty (section 2.1.2)")
	}
	nManifests := 0
	for _, name := range sortedKeys(files) {
		mm := manifestName.FindStringSubmatch(name)
		if mm == nil {
			continue
		}
		isTag, alg := mm[1] == "tag", mm[2]
		if !isTag {
			nManifests++
		}
		entries, eprobs := parseManifest(name, files[name])
		probs = append(probs, eprobs...)
		listed := map[string]bool{}
		for _, e := range entries {
			p := e.path
			switch {
			case path.IsAbs(p) || path.Clean(p) != p || strings.HasPrefix(p, "../") || p == "..":
				bad("%s: path %q is not a clean path inside the bag (section 2.1.3)", name, p)
				continue
			case !isTag && !strings.HasPrefix(p, payloadSlash):
				bad("%s: %q is not under data/ (section 2.1.3)", name, p)
				continue
			case isTag && (strings.HasPrefix(p, payloadSlash) || manifestName.MatchString(p) && strings.HasPrefix(p, "tag")):
				bad("%s: %q is not a tag file it may list (section 2.2.1)", name, p)
				continue
			}
			if listed[p] {
				bad("%s: %q is listed twice", name, p)
			}
			listed[p] = true
			b, ok := files[p]
			if !ok {
				bad("%s: %q is listed and missing (section 3)", name, p)
				continue
			}
			if alg == "sha256" && sum(b) != strings.ToLower(e.sum) {
				bad("%s: the checksum of %q does not match (section 3)", name, p)
			}
		}
		if !isTag {
			for _, p := range sortedKeys(payload) {
				if !listed[p] {
					bad("%s: payload file %q is not listed (section 3)", name, p)
				}
			}
		}
	}
	if nManifests == 0 {
		bad("no payload manifest manifest-<algorithm>.txt (section 2.1.3)")
	}
	if bi, ok := files[BagInfo]; ok {
		for _, l := range strings.Split(strings.TrimSuffix(string(bi), "\n"), "\n") {
			if l == "" || l[0] == ' ' || l[0] == '\t' {
				continue // a continuation line (section 2.2.2)
			}
			k, v, ok := strings.Cut(l, ":")
			if !ok {
				bad("bag-info.txt: a line is not LABEL: VALUE (section 2.2.2)")
				continue
			}
			if k == "Payload-Oxum" {
				m := oxum.FindStringSubmatch(strings.TrimSpace(v))
				octets := 0
				for p := range payload {
					octets += len(files[p])
				}
				if m == nil || m[1] != strconv.Itoa(octets) || m[2] != strconv.Itoa(len(payload)) {
					bad("bag-info.txt: Payload-Oxum %s is not %d.%d (section 2.2.2)", strings.TrimSpace(v), octets, len(payload))
				}
			}
		}
	}
	return probs
}

type entry struct{ sum, path string }

// parseManifest reads manifest lines "CHECKSUM FILEPATH" (one or more spaces or tabs between).
func parseManifest(name string, b []byte) ([]entry, []string) {
	var out []entry
	var probs []string
	for i, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSuffix(l, "\r")
		if l == "" {
			continue
		}
		j := strings.IndexAny(l, " \t")
		if j <= 0 {
			probs = append(probs, fmt.Sprintf("%s line %d: not CHECKSUM FILEPATH (section 2.1.3)", name, i+1))
			continue
		}
		p := strings.TrimLeft(l[j:], " \t")
		if _, err := hex.DecodeString(l[:j]); err != nil || p == "" {
			probs = append(probs, fmt.Sprintf("%s line %d: not CHECKSUM FILEPATH (section 2.1.3)", name, i+1))
			continue
		}
		out = append(out, entry{l[:j], decodePath(p)})
	}
	return out, probs
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
