-- sign-in-with-x nonces that were used (server/siwx). A nonce is stateless until a proof spends
-- it; only spent nonces are stored, until their challenge expires (then swept). No wallet, no
-- address, no export data. Times are Unix milliseconds.
CREATE TABLE siwx_nonces (
    nonce      TEXT   PRIMARY KEY,
    expires_ms BIGINT NOT NULL
);
CREATE INDEX siwx_nonces_expires ON siwx_nonces (expires_ms);
-- The free-tier sweep deletes rows past their window by day.
CREATE INDEX free_tier_day ON free_tier (day);
