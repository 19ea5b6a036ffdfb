ALTER TABLE versions DROP COLUMN deprecation;
