ALTER TABLE version_contents DROP COLUMN readme_html;
