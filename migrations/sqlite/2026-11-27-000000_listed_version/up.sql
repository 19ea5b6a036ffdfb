-- The version each tool is listed under (its newest live version, else its
-- newest blocked one, else its newest), chosen when the summary is
-- rewritten, in the transaction of the write that changed it. The tool
-- summary, search and the web index read it instead of choosing again.
-- NULL for the summaries stored before this migration, until the server
-- fills them in at start-up (`tool_summary::fill_missing`).
ALTER TABLE tool_summaries ADD COLUMN listed_version_id INTEGER REFERENCES versions(id);
