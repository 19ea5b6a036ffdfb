-- Owner invitations: adding an owner invites them; they become an owner
-- only when they accept, before the invitation expires.
CREATE TABLE owner_invitations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tool_id INTEGER NOT NULL REFERENCES tools(id),
    invitee_id INTEGER NOT NULL REFERENCES users(id),
    inviter_id INTEGER NOT NULL REFERENCES users(id),
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX owner_invitations_tool_invitee ON owner_invitations(tool_id, invitee_id);
CREATE INDEX owner_invitations_invitee ON owner_invitations(invitee_id);
