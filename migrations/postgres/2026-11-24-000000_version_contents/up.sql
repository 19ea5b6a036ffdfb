-- A version's large texts (the canonical manifest, the original definition,
-- the README) move out of `versions` into `version_contents`, and `versions`
-- gains `summary`: the manifest's listing fields (call_name, title,
-- description, keywords, license, homepage, repository) as a small JSON
-- object, so the hot reads touch small rows (see the SQLite migration).
CREATE TABLE version_contents (
    version_id BIGINT PRIMARY KEY REFERENCES versions(id),
    manifest TEXT NOT NULL,
    definition_file TEXT NOT NULL,
    definition TEXT NOT NULL,
    readme TEXT
);

INSERT INTO version_contents (version_id, manifest, definition_file, definition, readme)
SELECT id, manifest, definition_file, definition, readme FROM versions;

ALTER TABLE versions ADD COLUMN summary TEXT NOT NULL DEFAULT '{}';

-- The same fields `ManifestSummary` reads (server/src/models/version.rs).
-- Every stored manifest is the JSON the server wrote on publish.
UPDATE versions v SET summary = jsonb_build_object(
    'call_name', m.doc -> 'call_name',
    'title', m.doc -> 'title',
    'description', m.doc -> 'description',
    'keywords', CASE WHEN jsonb_typeof(m.doc -> 'keywords') = 'array'
                     THEN m.doc -> 'keywords' ELSE '[]'::jsonb END,
    'license', m.doc -> 'license',
    'homepage', m.doc -> 'homepage',
    'repository', m.doc -> 'repository'
)::text
FROM (SELECT version_id, manifest::jsonb AS doc FROM version_contents) m
WHERE m.version_id = v.id;

ALTER TABLE versions
    DROP COLUMN manifest,
    DROP COLUMN definition_file,
    DROP COLUMN definition,
    DROP COLUMN readme;
