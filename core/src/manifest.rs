//! toolreg.toml [tool] table.
