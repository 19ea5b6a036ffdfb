//! mcp format
