//! Definition fingerprints: `sha256:` + the lowercase hex SHA-256 of the
//! RFC 8785 ([`crate::jcs`]) form of a version's MCP export
//! ([`crate::export::to_mcp`]) — the call name, title, description, input
//! and output schema, annotations and icons an agent's model reads.
//!
//! Any MCP client can recompute it from a live `tools/list` answer with
//! [`of_mcp`]: a tool listed exactly as the registry exports it has the same
//! fingerprint whatever its key order, whitespace or number spelling.
//!
//! A lock keeps a fingerprint for years, so the export is part of this
//! contract: a change to [`crate::export::to_mcp`] that alters the
//! fingerprint of an existing version breaks every lock that pins it. A
//! golden file of the corpus's fingerprints (`tests/fingerprint.rs`) makes
//! such a change visible.

use serde_json::Value;

use crate::digest::{is_sha256_hex, sha256_hex};
use crate::export::to_mcp;
use crate::model::Tool;

/// The algorithm prefix of every fingerprint.
pub const PREFIX: &str = "sha256:";

/// The fingerprint of a tool version: of its MCP export.
pub fn of_tool(tool: &Tool) -> String {
    of_mcp(&to_mcp(tool))
}

/// The fingerprint of an MCP `Tool` object as found in a `tools/list`
/// answer (or as exported). The object is hashed as given: a field the
/// registry's export does not have (a server's own `_meta`, say) is part of
/// what the model may read, so it changes the fingerprint.
pub fn of_mcp(tool: &Value) -> String {
    format!("{PREFIX}{}", sha256_hex(&crate::jcs::to_vec(tool)))
}

/// True if `s` is a fingerprint: `sha256:` and 64 lowercase hex digits.
pub fn is_fingerprint(s: &str) -> bool {
    s.strip_prefix(PREFIX).is_some_and(is_sha256_hex)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_whitespace_and_number_spelling_do_not_matter() {
        let a: Value = serde_json::from_str(
            r#"{"name":"t","inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":1.50}}}}"#,
        )
        .unwrap();
        let b: Value = serde_json::from_str(
            r#"{ "inputSchema" : { "properties": { "n": { "maximum": 15e-1, "type": "number" } }, "type": "object" },
                 "name": "t" }"#,
        )
        .unwrap();
        assert_eq!(of_mcp(&a), of_mcp(&b));
        assert!(is_fingerprint(&of_mcp(&a)));
        let c = json!({"name": "t", "inputSchema": {"type": "object"}});
        assert_ne!(of_mcp(&a), of_mcp(&c));
    }

    #[test]
    fn the_hash_is_of_the_canonical_bytes() {
        let v = json!({"b": 1, "a": "x"});
        assert_eq!(
            of_mcp(&v),
            format!("sha256:{}", sha256_hex(br#"{"a":"x","b":1}"#))
        );
    }

    #[test]
    fn recognizes_fingerprints() {
        assert!(!is_fingerprint(&"a".repeat(64)));
        assert!(!is_fingerprint(&format!("sha256:{}", "A".repeat(64))));
        assert!(!is_fingerprint("sha256:abc"));
        assert!(is_fingerprint(&format!("sha256:{}", "0f".repeat(32))));
    }
}
