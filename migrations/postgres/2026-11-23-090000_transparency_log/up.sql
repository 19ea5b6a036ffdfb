-- The transparency log (DESIGN §8, server/src/transparency): one record per
-- published version, appended in the publish transaction, and the hash of
-- every complete subtree at (level, n) so proofs read O(log n) stored hashes.
-- Appends are serialized across replicas by an advisory transaction lock.
CREATE TABLE log_entries (
    idx BIGINT PRIMARY KEY,
    version_id BIGINT NOT NULL UNIQUE REFERENCES versions(id),
    tool TEXT NOT NULL,
    version TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    record TEXT NOT NULL,
    leaf_hash BYTEA NOT NULL,
    created_at TIMESTAMP NOT NULL
);

-- id is Go tlog's StoredHashIndex(level, n): dense, in write order.
CREATE TABLE log_hashes (
    id BIGINT PRIMARY KEY,
    level INTEGER NOT NULL,
    n BIGINT NOT NULL,
    hash BYTEA NOT NULL,
    UNIQUE (level, n)
);
