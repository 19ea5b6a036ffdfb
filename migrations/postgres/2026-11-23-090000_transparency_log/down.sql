DROP TABLE log_hashes;
DROP TABLE log_entries;
