//! RFC 8785 JSON Canonicalization Scheme (JCS): one byte sequence per JSON
//! value, so that a hash of it names the value whatever its key order,
//! whitespace or number spelling. Definition fingerprints hash this form.
//!
//! The serialization is the `serde_jcs` crate's. `tests/jcs.rs` holds it to
//! RFC 8785's own examples: the §3.2.2 example object (text and §3.2.4
//! bytes), the §3.2.3 property-sorting example (UTF-16 code-unit order, where
//! U+1F600 sorts before U+FB33 and `"\r"` before `"1"`), every number of
//! Appendix B, and integers beyond 2^53 (written as the double they round to).

use serde_json::Value;

/// The canonical (RFC 8785) form of `value` as UTF-8 bytes.
pub fn to_vec(value: &Value) -> Vec<u8> {
    // A serde_json::Value holds no NaN or infinity — the only values
    // without a canonical form — so serialization does not fail; the empty
    // fallback is never taken.
    serde_jcs::to_vec(value).unwrap_or_default()
}

/// The canonical (RFC 8785) form of `value` as a string.
pub fn to_string(value: &Value) -> String {
    String::from_utf8(to_vec(value)).unwrap_or_default()
}

/// A double as RFC 8785 writes numbers (ECMAScript's
/// `Number.prototype.toString`); `None` for NaN and the infinities, which
/// have no JSON form.
pub fn number_to_string(f: f64) -> Option<String> {
    serde_jcs::to_string(&f).ok()
}
