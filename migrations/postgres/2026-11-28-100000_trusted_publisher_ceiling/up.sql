-- Whether the token that added a trusted publisher was an agent token. A
-- token exchanged through it carries no more than that token could: when it
-- was an agent token, the exchanged token is one too (it publishes as
-- `untrusted`). Rows added before this column are marked from the audit log.
ALTER TABLE trusted_publishers ADD COLUMN creator_agent BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE trusted_publishers SET creator_agent = TRUE WHERE id IN (
    SELECT (a.detail::json->>'id')::BIGINT FROM audit_log a
    JOIN tokens t ON t.id = a.token_id
    WHERE a.action = 'trusted_publisher_add' AND t.agent);
