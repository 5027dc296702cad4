-- One unsettled payment per payer across replicas (fee-payer protection): at most one row per
-- payer may be reserved or submitted at a time.
CREATE UNIQUE INDEX x402_settlements_payer_in_flight ON x402_settlements (payer) WHERE status IN ('reserved', 'submitted');
