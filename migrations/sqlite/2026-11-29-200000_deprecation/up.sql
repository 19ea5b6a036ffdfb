-- Deprecation: an owner's advice that a version should no longer be chosen,
-- with a message and an optional successor tool, as JSON
-- {"message": "...", "successor": "name" | null, "req": "<2.0.0" | null}
-- (`req` is the requirement it was set for; null for the whole tool).
-- NULL when the version is not deprecated. Unlike a yank it changes nothing
-- about what is served or resolved.
ALTER TABLE versions ADD COLUMN deprecation TEXT;
