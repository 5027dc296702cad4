package x402

import "github.com/scopehygiene/scope-hygiene/server/settlement"

// The settlement records and stores live in server/settlement (storage must not depend on
// payments); these names keep the payment code reading as before.
type (
	// Status is the state of one settlement row.
	Status = settlement.Status
	// Settlement is one row of the x402_settlements table.
	Settlement = settlement.Settlement
	// SettlementStore persists settlement state.
	SettlementStore = settlement.Store
	// ClaimRule is the condition of SettlementStore.Claim.
	ClaimRule = settlement.ClaimRule
	// MemStore is an in-process SettlementStore.
	MemStore = settlement.MemStore
	// SQLStore is the SettlementStore over the x402_settlements table.
	SQLStore = settlement.SQLStore
	// SQLDB is the database surface SQLStore needs.
	SQLDB = settlement.SQLDB
	// FailedFee is one failed payment of a payer (the fee budget's input).
	FailedFee = settlement.FailedFee
	// Retention says how long finished settlement rows are kept.
	Retention = settlement.Retention
)

// Settlement states and store errors (see server/settlement).
const (
	StatusReserved    = settlement.StatusReserved
	StatusSubmitted   = settlement.StatusSubmitted
	StatusSettled     = settlement.StatusSettled
	StatusDelivered   = settlement.StatusDelivered
	StatusReleased    = settlement.StatusReleased
	StatusFailed      = settlement.StatusFailed
	ReasonUndelivered = settlement.ReasonUndelivered
	ReasonRefunded    = settlement.ReasonRefunded
)

var (
	ErrSettlementNotFound = settlement.ErrNotFound
	ErrChallengeUsed      = settlement.ErrChallengeUsed
	ErrPayerBusy          = settlement.ErrPayerBusy
)

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore { return settlement.NewMemStore() }

// NewSQLStore returns a SQLStore; dollar selects $N placeholders (PostgreSQL).
func NewSQLStore(db SQLDB, dollar bool) *SQLStore { return settlement.NewSQLStore(db, dollar) }
