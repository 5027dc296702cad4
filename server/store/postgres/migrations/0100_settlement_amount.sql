-- The amount a payment was made at (USDC atomic units, the criteria price the server asked when it
-- verified the transfer): a refund books this amount, whatever price the criteria state later.
-- 0 on rows written before this column (their amount is not known to the store).
ALTER TABLE x402_settlements ADD COLUMN amount_units BIGINT NOT NULL DEFAULT 0 CHECK (amount_units >= 0);
