-- Each version's definition fingerprint: `sha256:` + the SHA-256 of the
-- RFC 8785 (JCS) form of its MCP export. Written at publish; versions
-- published before it existed get theirs when the server starts.
ALTER TABLE versions ADD COLUMN definition_sha256 TEXT;
