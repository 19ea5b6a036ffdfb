DROP INDEX reports_version_id;
DROP INDEX reports_status_id;
DROP TABLE reports;
ALTER TABLE versions DROP COLUMN quarantined_at;
ALTER TABLE versions DROP COLUMN quarantine_reason;
ALTER TABLE versions DROP COLUMN quarantined;
