-- Fixed-window rate-limit counters shared by every replica (server/src/rate_limit.rs):
-- one row per action ('publish', 'token_create') and subject ('token:ID', 'ip:ADDR').
CREATE TABLE rate_limits (
    action TEXT NOT NULL,
    subject TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    hits BIGINT NOT NULL,
    PRIMARY KEY (action, subject)
);
CREATE INDEX rate_limits_window ON rate_limits(action, window_start);
