package x402

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	solana "github.com/gagliardetto/solana-go"
)

// Network is one Solana cluster the service can be paid on.
type Network struct {
	// Name is the short operator-facing name ("mainnet", "devnet").
	Name string
	// CAIP2 is the CAIP-2 chain id carried in PaymentRequirements.network.
	CAIP2 string
	// USDCMint is the classic SPL Token USDC mint of that cluster.
	USDCMint solana.PublicKey
	// DefaultRPC is the public JSON-RPC endpoint used when the operator gives none.
	DefaultRPC string
}

// Known networks. There is no default: payments are on only with an explicitly named network,
// and only mainnet is revenue (every other network's ledger rows are house rows).
var (
	Mainnet = Network{
		Name:       "mainnet",
		CAIP2:      "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
		USDCMint:   solana.MustPublicKeyFromBase58("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"),
		DefaultRPC: "https://api.mainnet-beta.solana.com",
	}
	Devnet = Network{
		Name:       "devnet",
		CAIP2:      "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
		USDCMint:   solana.MustPublicKeyFromBase58("4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"),
		DefaultRPC: "https://api.devnet.solana.com",
	}
)

// NetworkByName returns the network called name ("mainnet" or "devnet").
func NetworkByName(name string) (Network, error) {
	switch name {
	case "mainnet", "mainnet-beta":
		return Mainnet, nil
	case "devnet":
		return Devnet, nil
	case "":
		return Network{}, errors.New("x402: payments need an explicit network (mainnet or devnet)")
	}
	return Network{}, errors.New("x402: unknown network (want mainnet or devnet)")
}

// IsMainnet reports whether n is Solana mainnet, the only network whose payments are revenue.
func (n Network) IsMainnet() bool { return n.CAIP2 == Mainnet.CAIP2 }

// Price is the price of one audit as the criteria publish it (criteria.yaml price block); the
// payment layer never states a price of its own.
type Price struct {
	// Units is the price in USDC atomic units.
	Units uint64
	// Label is the published label (e.g. "$0.05").
	Label string
	// Status is the published status stated with the price (e.g. RULED).
	Status string
}

// Policy constants of the payment layout we accept. They are published in docs/x402.md.
const (
	// USDCDecimals is the decimals byte a TransferChecked must carry.
	USDCDecimals uint8 = 6
	// MaxComputeUnits caps SetComputeUnitLimit (the x402 client uses 20 000).
	MaxComputeUnits uint32 = 40000
	// MaxMicroLamportsPerCU caps SetComputeUnitPrice (the reference facilitator's cap).
	MaxMicroLamportsPerCU uint64 = 5_000_000
	// MaxPriorityFeeLamports caps ceil(units*price/1e6), the priority fee our fee payer pays.
	MaxPriorityFeeLamports uint64 = 5000
	// RequiredSignatures is the exact number of signers: our fee payer and the client.
	RequiredSignatures = 2
	// DefaultMaxTimeoutSeconds is advertised as maxTimeoutSeconds.
	DefaultMaxTimeoutSeconds = 60
	// DefaultChallengeTTL is how long an issued challenge (extra.memo) can be paid.
	DefaultChallengeTTL = 120 * time.Second
)

// Config is everything the payment layer needs; see LoadConfig for flags and environment.
type Config struct {
	Network Network
	// Price is the criteria's price (required).
	Price Price
	// RPCURL is the JSON-RPC endpoint used for settlement.
	RPCURL string
	// FeePayer is the hot key that co-signs and pays transaction fees. It holds SOL only.
	FeePayer solana.PrivateKey
	// PayTo is the operator's wallet (owner); USDC arrives at its associated token account.
	PayTo solana.PublicKey
	// ChallengeKey is the HMAC key protecting extra.memo challenges (at least 32 bytes).
	ChallengeKey []byte
	// ResourceURL, when set, is advertised in PaymentRequired.resource.url; it must be
	// absolute. When empty the API's quote supplies it (public base URL + route).
	ResourceURL string
	// MaxTimeoutSeconds is advertised in the requirements (default 60).
	MaxTimeoutSeconds int
	// ChallengeTTL bounds how long a challenge may be paid (default 120 s).
	ChallengeTTL time.Duration
}

// Validate checks the configuration for the mistakes an operator can make.
func (c *Config) Validate() error {
	if c.Network.CAIP2 == "" {
		return errors.New("x402: network not set")
	}
	if c.Price.Units == 0 || c.Price.Label == "" || c.Price.Status == "" {
		return errors.New("x402: price not set (units, label and status come from the criteria)")
	}
	if c.RPCURL == "" {
		return errors.New("x402: rpc url not set")
	}
	if len(c.FeePayer) != 64 {
		return errors.New("x402: fee-payer key not set (64-byte keypair required)")
	}
	if c.PayTo.IsZero() {
		return errors.New("x402: payTo wallet not set")
	}
	if c.PayTo.Equals(c.FeePayer.PublicKey()) {
		return errors.New("x402: payTo must not be the fee payer")
	}
	if len(c.ChallengeKey) < 32 {
		return fmt.Errorf("x402: challenge key too short: %d bytes, need at least 32", len(c.ChallengeKey))
	}
	if c.MaxTimeoutSeconds <= 0 {
		c.MaxTimeoutSeconds = DefaultMaxTimeoutSeconds
	}
	if c.ChallengeTTL <= 0 {
		c.ChallengeTTL = DefaultChallengeTTL
	}
	if u, err := url.Parse(c.ResourceURL); c.ResourceURL != "" && (err != nil || !u.IsAbs() || u.Host == "") {
		return errors.New("x402: resource url must be absolute (set the public base URL)")
	}
	return nil
}

// PayToATA is the classic-Token associated token account of PayTo for the network's USDC mint.
func (c *Config) PayToATA() (solana.PublicKey, error) {
	ata, _, err := solana.FindAssociatedTokenAddress(c.PayTo, c.Network.USDCMint)
	if err != nil {
		return solana.PublicKey{}, fmt.Errorf("x402: derive payTo token account: %w", err)
	}
	return ata, nil
}

// Requirements returns the single accepts entry advertised for a given challenge memo.
func (c *Config) Requirements(memo string) PaymentRequirements {
	return PaymentRequirements{
		Scheme:            SchemeExact,
		Network:           c.Network.CAIP2,
		Amount:            strconv.FormatUint(c.Price.Units, 10),
		Asset:             c.Network.USDCMint.String(),
		PayTo:             c.PayTo.String(),
		MaxTimeoutSeconds: c.MaxTimeoutSeconds,
		Extra: Extra{FeePayer: c.FeePayer.PublicKey().String(), Memo: memo,
			Price: &PriceTag{Label: c.Price.Label, Status: c.Price.Status}},
	}
}
