ALTER TABLE version_contents DROP COLUMN findings;
