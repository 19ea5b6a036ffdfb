-- The deployment environment an exchanged token's CI job ran in (NULL: none,
-- or not a token from trusted publishing). Publish checks it against the
-- trusted publishers still set, so removing an environment-bound one stops
-- its tokens even while another for the same workflow exists.
ALTER TABLE tokens ADD COLUMN oidc_environment TEXT;
