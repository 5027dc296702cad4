package x402

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Challenge format (ASCII, public on-chain as the Memo of the payment):
//
//	sh1.<expiry unix seconds>.<nonce: 16 random bytes, hex>.<mac: base64url(HMAC-SHA256)>
//
// The MAC covers a domain tag, the network, payTo, the amount, the fee payer, the expiry and the
// nonce, so a challenge issued for one price, wallet or cluster cannot be replayed against
// another, and an expired or forged one is refused without any server state.

const challengePrefix = "sh1"

// Challenge errors (static strings, usable as error reasons).
var (
	ErrChallengeMalformed = errors.New("challenge_invalid")
	ErrChallengeMAC       = errors.New("challenge_invalid")
	ErrChallengeExpired   = errors.New("challenge_expired")
)

// Challenger issues and checks extra.memo challenges.
type Challenger struct {
	key   []byte
	bind  string
	ttl   time.Duration
	now   func() time.Time
	nonce func([]byte) error
}

// NewChallenger returns a Challenger bound to cfg (network, payTo, price, fee payer).
func NewChallenger(cfg *Config, now func() time.Time) *Challenger {
	if now == nil {
		now = time.Now
	}
	bind := strings.Join([]string{
		"scope-hygiene/x402-challenge/v1",
		cfg.Network.CAIP2,
		cfg.PayTo.String(),
		strconv.FormatUint(cfg.Price.Units, 10),
		cfg.FeePayer.PublicKey().String(),
	}, "|")
	return &Challenger{key: cfg.ChallengeKey, bind: bind, ttl: cfg.ChallengeTTL, now: now,
		nonce: func(b []byte) error { _, err := rand.Read(b); return err }}
}

func (c *Challenger) mac(exp, nonce string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(c.bind))
	m.Write([]byte("|" + exp + "|" + nonce))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Issue returns a fresh challenge and its expiry.
func (c *Challenger) Issue() (string, time.Time, error) {
	var n [16]byte
	if err := c.nonce(n[:]); err != nil {
		return "", time.Time{}, fmt.Errorf("x402: challenge nonce: %w", err)
	}
	exp := c.now().Add(c.ttl).Truncate(time.Second)
	es := strconv.FormatInt(exp.Unix(), 10)
	ns := hex.EncodeToString(n[:])
	return challengePrefix + "." + es + "." + ns + "." + c.mac(es, ns), exp, nil
}

// Check verifies the MAC and expiry of a challenge and returns its expiry.
func (c *Challenger) Check(s string) (time.Time, error) {
	if len(s) > 256 {
		return time.Time{}, ErrChallengeMalformed
	}
	parts := strings.Split(s, ".")
	if len(parts) != 4 || parts[0] != challengePrefix || len(parts[2]) != 32 {
		return time.Time{}, ErrChallengeMalformed
	}
	if _, err := hex.DecodeString(parts[2]); err != nil {
		return time.Time{}, ErrChallengeMalformed
	}
	secs, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || secs <= 0 {
		return time.Time{}, ErrChallengeMalformed
	}
	want := c.mac(parts[1], parts[2])
	if !hmac.Equal([]byte(want), []byte(parts[3])) {
		return time.Time{}, ErrChallengeMAC
	}
	exp := time.Unix(secs, 0)
	if !c.now().Before(exp) {
		return exp, ErrChallengeExpired
	}
	return exp, nil
}
