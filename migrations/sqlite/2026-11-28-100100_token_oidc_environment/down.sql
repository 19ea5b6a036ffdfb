ALTER TABLE tokens DROP COLUMN oidc_environment;
