-- One ledger row per settled payment: the append is idempotent on the payment transaction, so a
-- resumed paid audit after a crash between the ledger write and the settlement update can never
-- write a second row. An index, not a field: the ledger's columns stay the closed list.
CREATE UNIQUE INDEX IF NOT EXISTS ledger_payment_tx_once ON ledger (payment_tx) WHERE payment_tx IS NOT NULL;
