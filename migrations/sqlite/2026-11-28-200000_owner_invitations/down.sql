DROP TABLE owner_invitations;
