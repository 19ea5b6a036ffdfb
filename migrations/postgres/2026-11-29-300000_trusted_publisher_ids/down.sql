ALTER TABLE trusted_publishers DROP COLUMN owner_id;
ALTER TABLE trusted_publishers DROP COLUMN repository_id;
