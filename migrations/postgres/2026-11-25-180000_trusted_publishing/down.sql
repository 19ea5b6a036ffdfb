ALTER TABLE versions DROP COLUMN provenance;
ALTER TABLE tokens DROP COLUMN provenance;
DROP TABLE token_tools;
DROP TABLE oidc_exchanges;
DROP TABLE trusted_publishers;
