-- The CI provider's immutable identifiers of a trusted publisher's
-- repository: GitHub's `repository_id` and `repository_owner_id`, GitLab's
-- `project_id` and `namespace_id`. A name can be taken again after the
-- repository is deleted or its owner renamed; these can't. NULL until an
-- owner gives them or the first verified exchange records them.
ALTER TABLE trusted_publishers ADD COLUMN repository_id TEXT;
ALTER TABLE trusted_publishers ADD COLUMN owner_id TEXT;
