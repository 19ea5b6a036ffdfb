-- The transparency log (DESIGN §8, server/src/transparency): one record per
-- published version, appended in the publish transaction, and the hash of
-- every complete subtree at (level, n) so proofs read O(log n) stored hashes.
CREATE TABLE log_entries (
    idx INTEGER PRIMARY KEY NOT NULL,
    version_id INTEGER NOT NULL UNIQUE REFERENCES versions(id),
    tool TEXT NOT NULL,
    version TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    record TEXT NOT NULL,
    leaf_hash BLOB NOT NULL,
    created_at TIMESTAMP NOT NULL
);

-- id is Go tlog's StoredHashIndex(level, n): dense, in write order.
CREATE TABLE log_hashes (
    id INTEGER PRIMARY KEY NOT NULL,
    level INTEGER NOT NULL,
    n BIGINT NOT NULL,
    hash BLOB NOT NULL,
    UNIQUE (level, n)
);
