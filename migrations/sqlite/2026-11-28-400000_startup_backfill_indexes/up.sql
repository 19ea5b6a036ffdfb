-- The versions the server fills in at start-up (their SemVer order key and
-- their definition fingerprint, for versions published before those were
-- stored). Each index holds only the versions still missing the value, so
-- the start-up check for them reads an empty index instead of every
-- version row; once filled, a version leaves the index.
CREATE INDEX versions_without_order ON versions(id) WHERE version_order = '';
CREATE INDEX versions_without_fingerprint ON versions(id) WHERE definition_sha256 IS NULL;
