ALTER TABLE trusted_publishers DROP COLUMN creator_agent;
