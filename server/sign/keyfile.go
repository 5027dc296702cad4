package sign

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// LoadKey reads an Ed25519 private key from a PEM file (PKCS #8, "PRIVATE KEY").
func LoadKey(path string) (*Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	priv, err := parsePrivate(b)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	return NewSigner(priv), nil
}

func parsePrivate(b []byte) (ed25519.PrivateKey, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, errors.New("not a PEM \"PRIVATE KEY\" block")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse PKCS #8: %w", err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, errors.New("not an Ed25519 key")
	}
	return priv, nil
}

// LoadOrCreateKey loads the key at path, or generates one and keeps it there (mode 0600) when the
// file does not exist. Creation is atomic: concurrent first runs end up sharing one key.
func LoadOrCreateKey(path string) (s *Signer, created bool, err error) {
	s, err = LoadKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return s, false, err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, false, fmt.Errorf("generate signing key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, false, fmt.Errorf("encode signing key: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("signing key directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".signing-key-*")
	if err != nil {
		return nil, false, fmt.Errorf("write signing key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, false, fmt.Errorf("write signing key: %w", err)
	}
	if err := pem.Encode(tmp, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		tmp.Close()
		return nil, false, fmt.Errorf("write signing key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, false, fmt.Errorf("write signing key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, false, fmt.Errorf("write signing key: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) { // another process won the race: use its key
			s, err := LoadKey(path)
			return s, false, err
		}
		return nil, false, fmt.Errorf("write signing key: %w", err)
	}
	return NewSigner(priv), true, nil
}

// WritePublicPEM renders pub as a PEM "PUBLIC KEY" (PKIX) block.
func WritePublicPEM(pub ed25519.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("encode public key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// ReadPublicKey reads the key to verify against from a file that is one of: a saved GET /criteria
// document (member report_signing_key), a PEM public key, or a PEM private key file.
func ReadPublicKey(path string) (ed25519.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	return ParsePublicKey(b)
}

// CriteriaKeyMember is the member of the GET /criteria document that publishes the key.
const CriteriaKeyMember = "report_signing_key"

// ParsePublicKey is ReadPublicKey on bytes.
func ParsePublicKey(b []byte) (ed25519.PublicKey, error) {
	if blk, _ := pem.Decode(b); blk != nil {
		switch blk.Type {
		case "PUBLIC KEY":
			k, err := x509.ParsePKIXPublicKey(blk.Bytes)
			if err != nil {
				return nil, fmt.Errorf("key: parse PKIX: %w", err)
			}
			pub, ok := k.(ed25519.PublicKey)
			if !ok {
				return nil, errors.New("key: not an Ed25519 key")
			}
			return pub, nil
		case "PRIVATE KEY":
			priv, err := parsePrivate(b)
			if err != nil {
				return nil, fmt.Errorf("key: %w", err)
			}
			return priv.Public().(ed25519.PublicKey), nil
		}
		return nil, fmt.Errorf("key: unsupported PEM block %q", blk.Type)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, errors.New("key: neither PEM nor a JSON criteria document")
	}
	raw, ok := doc[CriteriaKeyMember]
	if !ok {
		return nil, fmt.Errorf("key: criteria document has no %s member", CriteriaKeyMember)
	}
	var pk PublicKey
	if err := json.Unmarshal(raw, &pk); err != nil {
		return nil, fmt.Errorf("key: %s: %w", CriteriaKeyMember, err)
	}
	return pk.Decode()
}
