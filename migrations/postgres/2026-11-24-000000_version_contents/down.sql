ALTER TABLE versions
    ADD COLUMN manifest TEXT NOT NULL DEFAULT '',
    ADD COLUMN definition_file TEXT NOT NULL DEFAULT '',
    ADD COLUMN definition TEXT NOT NULL DEFAULT '',
    ADD COLUMN readme TEXT;
UPDATE versions v SET manifest = c.manifest, definition_file = c.definition_file,
    definition = c.definition, readme = c.readme
FROM version_contents c WHERE c.version_id = v.id;
ALTER TABLE versions DROP COLUMN summary;
DROP TABLE version_contents;
