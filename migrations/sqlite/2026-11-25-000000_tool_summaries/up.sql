-- Each tool's summary (`GET /api/v1/tools/{name}`) stored as the JSON body
-- that is sent, rewritten in the transaction of every write that changes
-- what it shows (publish, yank, unyank, block, unblock, owners, a tier
-- change, the download-count flush): an uncached summary is then one lookup
-- instead of three queries, row decoding and JSON encoding
-- (server/src/models/tool_summary.rs).
--
-- Keyed by the tool's id (the rowid), found through the tools' unique index
-- on the normalized name: two small B-tree walks. Not a WITHOUT ROWID table
-- keyed by the name: its interior pages would hold whole rows (~900 bytes
-- of body each), four to a page, and a lookup walked ~5 levels.
--
-- Tools that exist before this migration get their row from the server at
-- start-up (`tool_summary::fill_missing`); until then their summary is
-- built from the rows on each read, as before.
CREATE TABLE tool_summaries (
    tool_id INTEGER PRIMARY KEY NOT NULL REFERENCES tools(id),
    body TEXT NOT NULL
);
