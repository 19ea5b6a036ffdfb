-- Each tool's summary (`GET /api/v1/tools/{name}`) stored as the JSON body
-- that is sent, rewritten in the transaction of every write that changes
-- what it shows (publish, yank, unyank, block, unblock, owners, a tier
-- change, the download-count flush): an uncached summary is then one lookup
-- instead of three queries, row decoding and JSON encoding
-- (server/src/models/tool_summary.rs). Found by name through the tools'
-- unique index on the normalized name.
--
-- Tools that exist before this migration get their row from the server at
-- start-up (`tool_summary::fill_missing`); until then their summary is
-- built from the rows on each read, as before.
CREATE TABLE tool_summaries (
    tool_id BIGINT PRIMARY KEY REFERENCES tools(id),
    body TEXT NOT NULL
);
