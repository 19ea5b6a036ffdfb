DROP TABLE tool_summaries;
