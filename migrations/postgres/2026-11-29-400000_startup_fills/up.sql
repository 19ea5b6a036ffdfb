-- Start-up fills that found nothing left to do. A fill's check can read a
-- whole table (comparing counts), so once it has found every row filled
-- it records that here and later starts look up one row instead. A
-- migration that needs a fill to run again deletes its row.
CREATE TABLE startup_fills (
    name TEXT PRIMARY KEY NOT NULL,
    done_at TIMESTAMP NOT NULL
);
