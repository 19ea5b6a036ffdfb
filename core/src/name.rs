//! Registry names.
pub fn normalize(name: &str) -> String { name.to_ascii_lowercase().replace("_", "-") }
