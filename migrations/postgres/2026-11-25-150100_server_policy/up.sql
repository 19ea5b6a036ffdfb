-- The tier policy the registry's versions were last checked against (one
-- row): a server starting with a different `--policy` re-checks every
-- version's block and warns that replicas may disagree.
CREATE TABLE server_policy (
    id INTEGER PRIMARY KEY,
    policy TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
