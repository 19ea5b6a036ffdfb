-- Trusted publishing: CI jobs that prove who they are with their
-- platform's OpenID Connect ID token get a short-lived token for the tools
-- whose owners named that repository and workflow.

-- Per tool: which CI identity may publish it.
CREATE TABLE trusted_publishers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    issuer TEXT NOT NULL,
    repository TEXT NOT NULL,
    workflow TEXT NOT NULL,
    environment TEXT,
    created_by INTEGER NOT NULL REFERENCES users(id),
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX trusted_publishers_match ON trusted_publishers(issuer, repository);
CREATE INDEX trusted_publishers_tool_id ON trusted_publishers(tool_id);

-- Every ID token exchanged, by issuer and `jti`, so each is exchanged once
-- (on every replica: the primary key refuses the second). Rows past their
-- expiry can be deleted.
CREATE TABLE oidc_exchanges (
    issuer TEXT NOT NULL,
    jti TEXT NOT NULL,
    expires_at TIMESTAMP NOT NULL,
    PRIMARY KEY (issuer, jti)
);

-- The tools an exchanged token may publish new versions of (a token
-- without rows here is not limited by tool).
CREATE TABLE token_tools (
    token_id INTEGER NOT NULL REFERENCES tokens(id),
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    PRIMARY KEY (token_id, tool_id)
);

-- The CI run an exchanged token came from (JSON), copied onto each version
-- it publishes; NULL for every other token and version.
ALTER TABLE tokens ADD COLUMN provenance TEXT;
ALTER TABLE versions ADD COLUMN provenance TEXT;
