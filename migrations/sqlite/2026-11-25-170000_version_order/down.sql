DROP INDEX versions_tool_order;
ALTER TABLE versions DROP COLUMN version_order;
