-- The registry's tables on SQLite (see server/src/schema.rs).
CREATE TABLE users (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    login TEXT NOT NULL UNIQUE,
    tier TEXT NOT NULL DEFAULT 'untrusted',
    is_admin BOOLEAN NOT NULL DEFAULT 0,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id INTEGER NOT NULL REFERENCES users(id),
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    agent BOOLEAN NOT NULL DEFAULT 0,
    expires_at TIMESTAMP,
    created_at TIMESTAMP NOT NULL,
    last_used_at TIMESTAMP,
    revoked_at TIMESTAMP
);
CREATE INDEX tokens_user_id ON tokens(user_id);

CREATE TABLE tools (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    normalized_name TEXT NOT NULL UNIQUE,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    downloads BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE tool_owners (
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (tool_id, user_id)
);
CREATE INDEX tool_owners_user_id ON tool_owners(user_id);

CREATE TABLE versions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    version TEXT NOT NULL,
    version_key TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size BIGINT NOT NULL,
    format TEXT NOT NULL,
    execution TEXT NOT NULL,
    manifest TEXT NOT NULL,
    definition_file TEXT NOT NULL,
    definition TEXT NOT NULL,
    readme TEXT,
    publisher_id INTEGER NOT NULL REFERENCES users(id),
    token_id INTEGER REFERENCES tokens(id),
    publisher_tier TEXT NOT NULL,
    yanked BOOLEAN NOT NULL DEFAULT 0,
    blocked BOOLEAN NOT NULL DEFAULT 0,
    blocked_reason TEXT,
    downloads BIGINT NOT NULL DEFAULT 0,
    published_at TIMESTAMP NOT NULL,
    UNIQUE (tool_id, version_key)
);
CREATE INDEX versions_sha256 ON versions(sha256);
CREATE INDEX versions_publisher_id ON versions(publisher_id);

-- The ordered change log that search indexes tail (DESIGN §6).
CREATE TABLE changes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    tool_name TEXT NOT NULL,
    version TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    action TEXT NOT NULL,
    actor_login TEXT,
    token_id INTEGER,
    tool TEXT,
    version TEXT,
    detail TEXT NOT NULL DEFAULT '{}',
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX audit_log_created_at ON audit_log(created_at);
