DROP TABLE audit_log;
DROP TABLE changes;
DROP TABLE versions;
DROP TABLE tool_owners;
DROP TABLE tools;
DROP TABLE tokens;
DROP TABLE users;
