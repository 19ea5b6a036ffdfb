-- The archive an Agent Skill version is served as to skill clients
-- (/.well-known/agent-skills/): a ustar .tar.gz with SKILL.md at its root,
-- built once from the bundle and stored as a blob under its own digest.
CREATE TABLE skill_archives (
    version_id INTEGER PRIMARY KEY NOT NULL REFERENCES versions(id),
    sha256 TEXT NOT NULL,
    size BIGINT NOT NULL,
    -- The files it holds, as a JSON array of [path, size] (the tool page's list).
    files TEXT NOT NULL
);
CREATE INDEX skill_archives_sha256 ON skill_archives(sha256);
