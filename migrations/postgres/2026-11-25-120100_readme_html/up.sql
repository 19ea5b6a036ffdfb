-- The README rendered to sanitized HTML at publish, so the tool page
-- serves it without rendering (NULL: rendered when the page is viewed).
ALTER TABLE version_contents ADD COLUMN readme_html TEXT;
