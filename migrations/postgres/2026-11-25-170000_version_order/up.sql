-- A version's SemVer precedence as a string whose byte order is that
-- precedence, so "the newest N versions of a tool" and "its newest live
-- version" are index range scans instead of loading and sorting every
-- version. Filled in by the server at start for versions published before
-- the column existed (the empty string marks them).
ALTER TABLE versions ADD COLUMN version_order TEXT NOT NULL DEFAULT '';
CREATE INDEX versions_tool_order ON versions(tool_id, version_order);
