-- Quarantine: an administrator withholds a version (download, resolve and
-- definition answer 403, search and the web index drop it) until the
-- quarantine is lifted; the reason is shown to everyone who asks.
ALTER TABLE versions ADD COLUMN quarantined BOOLEAN NOT NULL DEFAULT 0;
ALTER TABLE versions ADD COLUMN quarantine_reason TEXT;
ALTER TABLE versions ADD COLUMN quarantined_at TIMESTAMP;

-- Reports: a signed-in user's note to the administrators that a version's
-- definition looks harmful. Open until a quarantine of the version closes it.
CREATE TABLE reports (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    version_id INTEGER NOT NULL REFERENCES versions(id),
    reporter_id INTEGER NOT NULL REFERENCES users(id),
    reason TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX reports_status_id ON reports(status, id);
CREATE INDEX reports_version_id ON reports(version_id);
