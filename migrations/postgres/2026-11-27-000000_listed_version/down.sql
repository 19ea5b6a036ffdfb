ALTER TABLE tool_summaries DROP COLUMN listed_version_id;
