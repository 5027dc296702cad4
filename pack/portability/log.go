package portability

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"

	"github.com/gowebpki/jcs"

	"github.com/scopehygiene/scope-hygiene/pack/mpp"
)

// LogName is the event log's file name inside a package folder, beside the sealed bytes.
const LogName = mpp.EventLogName

// maxLogLine bounds one event line; maxEvents bounds a log (the log is untrusted input).
const (
	maxLogLine = 1 << 20
	maxEvents  = 100000
)

// Event is one line of the event log: who (role, key), why (purpose, decision), on which
// package revision, when, what (the operation and its record) and with which result. Prev
// chains it to the line before; the signature covers the RFC 8785 form of every other member.
type Event struct {
	Seq         int             `json:"seq"`
	Prev        string          `json:"prev"`
	Op          string          `json:"op"`
	PackageID   string          `json:"package_id"`
	Revision    int             `json:"revision"`
	RevisionRef string          `json:"revision_ref"`
	ActorRole   string          `json:"actor_role"`
	Purpose     string          `json:"purpose"`
	DecisionRef string          `json:"decision_ref"`
	Time        string          `json:"time"`
	Result      string          `json:"result"`
	StateBefore string          `json:"state_before"`
	StateAfter  string          `json:"state_after"`
	Record      json.RawMessage `json:"record"`
	Signature   *EventSignature `json:"signature,omitempty"`
}

// EventSignature is an event's Ed25519 signature and the key that made it.
type EventSignature struct {
	Alg   string `json:"alg"`
	KeyID string `json:"key_id"`
	Value string `json:"value"`
}

// Results of an event.
const (
	ResultRecorded = "recorded" // the operation's record was attached
	ResultRefused  = "refused"  // a precondition failed; the record says which
	ResultBlocked  = "blocked"  // preflight: the review lists blockers
)

// signedBytes is the RFC 8785 form of e without its signature.
func signedBytes(e Event) ([]byte, error) {
	e.Signature = nil
	return mpp.CanonicalJSON(e, "portability: event")
}

// signEvent signs e with priv and returns its log line (canonical JSON and a newline).
func signEvent(e Event, priv ed25519.PrivateKey) ([]byte, error) {
	msg, err := signedBytes(e)
	if err != nil {
		return nil, err
	}
	e.Signature = &EventSignature{Alg: "Ed25519", KeyID: mpp.KeyID(priv.Public().(ed25519.PublicKey)), Value: base64.StdEncoding.EncodeToString(ed25519.Sign(priv, msg))}
	c, err := mpp.CanonicalJSON(e, "portability: event")
	if err != nil {
		return nil, err
	}
	return append(c, '\n'), nil
}

// lineRef is the chain reference of one log line.
func lineRef(line []byte) string {
	s := sha256.Sum256(line)
	return "sha256:" + hex.EncodeToString(s[:])
}

// LoggedEvent is an event as read from the log, with what could be proved about its signature.
type LoggedEvent struct {
	Event
	// Signer is the key id that signed it; Trusted is true when that key is among the trusted
	// keys and the signature verifies under it.
	Signer  string
	Trusted bool
	Ref     string // the line's chain reference
}

// ParseLog reads an event log: each line canonical JSON, chained to the one before, numbered
// from 0, signed. Signatures are checked against trusted (a nil or empty set checks none, and no
// event is then trusted). A malformed or broken log is an error naming the line.
func ParseLog(log []byte, trusted []ed25519.PublicKey) ([]LoggedEvent, error) {
	keys := map[string]ed25519.PublicKey{}
	for _, k := range trusted {
		keys[mpp.KeyID(k)] = k
	}
	var out []LoggedEvent
	prev := ""
	for n := 0; len(log) > 0; n++ {
		i := bytes.IndexByte(log, '\n')
		if i < 0 {
			return out, fmt.Errorf("portability: %s line %d: not terminated (a torn append)", LogName, n+1)
		}
		line := log[:i+1]
		log = log[i+1:]
		if len(line) > maxLogLine || n >= maxEvents {
			return out, fmt.Errorf("portability: %s line %d: over the log's bounds", LogName, n+1)
		}
		var e Event
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return out, fmt.Errorf("portability: %s line %d: not an event", LogName, n+1)
		}
		if _, err := dec.Token(); err != io.EOF {
			return out, fmt.Errorf("portability: %s line %d: trailing data", LogName, n+1)
		}
		if c, err := jcs.Transform(line[:len(line)-1]); err != nil || !bytes.Equal(c, line[:len(line)-1]) {
			return out, fmt.Errorf("portability: %s line %d: not in RFC 8785 canonical form", LogName, n+1)
		}
		if e.Seq != n || e.Prev != prev {
			return out, fmt.Errorf("portability: %s line %d: breaks the chain (sequence or previous-line reference)", LogName, n+1)
		}
		if e.Signature == nil || e.Signature.Alg != "Ed25519" {
			return out, fmt.Errorf("portability: %s line %d: unsigned", LogName, n+1)
		}
		le := LoggedEvent{Event: e, Signer: e.Signature.KeyID, Ref: lineRef(line)}
		if k, ok := keys[e.Signature.KeyID]; ok {
			sig, err := base64.StdEncoding.DecodeString(e.Signature.Value)
			msg, merr := signedBytes(e)
			if err != nil || merr != nil || !ed25519.Verify(k, msg, sig) {
				return out, fmt.Errorf("portability: %s line %d: the signature does not verify under %s", LogName, n+1, e.Signature.KeyID)
			}
			le.Trusted = true
		}
		out = append(out, le)
		prev = le.Ref
	}
	return out, nil
}

// NewPackageID returns a fresh package identifier (a random UUID URN): independent of file
// names and content digests, so two packages never share one by accident.
func NewPackageID(r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	var b [16]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("portability: package id: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return "urn:uuid:" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}
