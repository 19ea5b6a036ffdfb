DROP TABLE startup_fills;
