ALTER TABLE versions ADD COLUMN manifest TEXT NOT NULL DEFAULT '';
ALTER TABLE versions ADD COLUMN definition_file TEXT NOT NULL DEFAULT '';
ALTER TABLE versions ADD COLUMN definition TEXT NOT NULL DEFAULT '';
ALTER TABLE versions ADD COLUMN readme TEXT;
UPDATE versions SET
    manifest = (SELECT manifest FROM version_contents WHERE version_id = versions.id),
    definition_file = (SELECT definition_file FROM version_contents WHERE version_id = versions.id),
    definition = (SELECT definition FROM version_contents WHERE version_id = versions.id),
    readme = (SELECT readme FROM version_contents WHERE version_id = versions.id);
ALTER TABLE versions DROP COLUMN summary;
DROP TABLE version_contents;
