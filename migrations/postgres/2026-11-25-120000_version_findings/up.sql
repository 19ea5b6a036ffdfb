-- The definition lint's findings of each version (the flags it was
-- published with), as a JSON array of {rule, severity, pointer, start, end,
-- excerpt, message}; versions published before the lint have none.
ALTER TABLE version_contents ADD COLUMN findings TEXT NOT NULL DEFAULT '[]';
