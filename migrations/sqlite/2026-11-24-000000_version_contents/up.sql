-- A version's large texts (the canonical manifest, the original definition,
-- the README) move out of `versions` into `version_contents`, and `versions`
-- gains `summary`: the manifest's listing fields (call_name, title,
-- description, keywords, license, homepage, repository) as a small JSON
-- object. A `versions` row is then a few hundred bytes, so the hot reads —
-- a tool's summary, a download, a resolve — touch one small row instead of
-- a row of several KB that spilled into SQLite overflow pages (the columns
-- after the texts could only be read by walking the overflow chain).
CREATE TABLE version_contents (
    version_id INTEGER PRIMARY KEY NOT NULL REFERENCES versions(id),
    manifest TEXT NOT NULL,
    definition_file TEXT NOT NULL,
    definition TEXT NOT NULL,
    readme TEXT
);

INSERT INTO version_contents (version_id, manifest, definition_file, definition, readme)
SELECT id, manifest, definition_file, definition, readme FROM versions;

ALTER TABLE versions ADD COLUMN summary TEXT NOT NULL DEFAULT '{}';

-- The same fields `ManifestSummary` reads (server/src/models/version.rs); a
-- manifest that is not JSON gives an empty summary, as reading it did.
UPDATE versions SET summary = (
    SELECT CASE WHEN json_valid(c.manifest) THEN json_object(
        'call_name', json_extract(c.manifest, '$.call_name'),
        'title', json_extract(c.manifest, '$.title'),
        'description', json_extract(c.manifest, '$.description'),
        'keywords', json(CASE WHEN json_type(c.manifest, '$.keywords') = 'array'
                              THEN json_extract(c.manifest, '$.keywords') ELSE '[]' END),
        'license', json_extract(c.manifest, '$.license'),
        'homepage', json_extract(c.manifest, '$.homepage'),
        'repository', json_extract(c.manifest, '$.repository')
    ) ELSE '{}' END
    FROM version_contents c WHERE c.version_id = versions.id
);

-- Dropping the columns in place would leave each remaining small row alone
-- on the page its large row had filled, so the rows are written anew: set
-- aside, deleted (foreign keys checked at commit, when every id is back),
-- and inserted into the narrowed table.
PRAGMA defer_foreign_keys = ON;
CREATE TEMP TABLE versions_kept AS
SELECT id, tool_id, version, version_key, sha256, size, format, execution, publisher_id,
       token_id, publisher_tier, yanked, blocked, blocked_reason, downloads, published_at, summary
FROM versions;
DELETE FROM versions;
ALTER TABLE versions DROP COLUMN manifest;
ALTER TABLE versions DROP COLUMN definition_file;
ALTER TABLE versions DROP COLUMN definition;
ALTER TABLE versions DROP COLUMN readme;
INSERT INTO versions (id, tool_id, version, version_key, sha256, size, format, execution, publisher_id,
                      token_id, publisher_tier, yanked, blocked, blocked_reason, downloads, published_at, summary)
SELECT id, tool_id, version, version_key, sha256, size, format, execution, publisher_id,
       token_id, publisher_tier, yanked, blocked, blocked_reason, downloads, published_at, summary
FROM versions_kept ORDER BY id;
DROP TABLE versions_kept;
