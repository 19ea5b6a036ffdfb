-- The token that created a token (NULL for tokens made by the operator's
-- `admin` subcommand): a child's expiry is clamped to its parent's, and
-- revoking a parent revokes its children.
ALTER TABLE tokens ADD COLUMN parent_id BIGINT REFERENCES tokens(id);
CREATE INDEX tokens_parent_id ON tokens(parent_id);
