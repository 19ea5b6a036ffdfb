ALTER TABLE versions DROP COLUMN definition_sha256;
