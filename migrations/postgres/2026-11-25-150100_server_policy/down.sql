DROP TABLE server_policy;
