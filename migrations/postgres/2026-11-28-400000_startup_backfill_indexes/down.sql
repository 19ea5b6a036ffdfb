DROP INDEX versions_without_fingerprint;
DROP INDEX versions_without_order;
