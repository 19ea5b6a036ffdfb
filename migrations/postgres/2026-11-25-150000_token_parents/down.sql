DROP INDEX tokens_parent_id;
ALTER TABLE tokens DROP COLUMN parent_id;
