//! Which MCP protocol versions the server speaks, and which shape of a
//! tool's MCP export each one gets.
//!
//! The export code in `toolreg-core` knows 2025-06-18, 2025-11-25 and
//! 2026-07-28 (the newest, the one definition fingerprints are defined
//! over). A client on 2026-07-28 gets exactly the fingerprinted export; a
//! client on 2025-11-25 or 2025-06-18 gets that version's export of the same
//! definition; the two older versions rmcp still negotiates (2025-03-26,
//! 2024-11-05) get the 2025-06-18 export, the oldest shape there is, whose
//! extra fields (`title`, `outputSchema`) those clients ignore.

use std::borrow::Cow;

use rmcp::model::ProtocolVersion;
use toolreg_core::export::McpProtocol;

/// Every version the server negotiates, oldest first.
pub const SUPPORTED: &[ProtocolVersion] = &[
    ProtocolVersion::V_2024_11_05,
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2026_07_28,
];

/// [`SUPPORTED`] as rmcp's handler wants it.
pub fn supported() -> Cow<'static, [ProtocolVersion]> {
    Cow::Borrowed(SUPPORTED)
}

/// The export shape for a negotiated version (`None`: a request that named
/// none, which rmcp treats as the oldest handshake era).
pub fn export_for(version: Option<&ProtocolVersion>) -> McpProtocol {
    let Some(v) = version else {
        return McpProtocol::V2025_06_18;
    };
    McpProtocol::ALL
        .into_iter()
        .rev()
        .find(|p| p.as_str() <= v.as_str())
        .unwrap_or(McpProtocol::V2025_06_18)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_version_gets_its_export() {
        assert_eq!(
            export_for(Some(&ProtocolVersion::V_2026_07_28)),
            McpProtocol::LATEST
        );
        assert_eq!(
            export_for(Some(&ProtocolVersion::V_2025_11_25)),
            McpProtocol::V2025_11_25
        );
        assert_eq!(
            export_for(Some(&ProtocolVersion::V_2025_06_18)),
            McpProtocol::V2025_06_18
        );
        for old in [ProtocolVersion::V_2025_03_26, ProtocolVersion::V_2024_11_05] {
            assert_eq!(export_for(Some(&old)), McpProtocol::V2025_06_18);
        }
        assert_eq!(export_for(None), McpProtocol::V2025_06_18);
        // every version core exports for is negotiated
        for p in McpProtocol::ALL {
            assert!(SUPPORTED.iter().any(|s| s.as_str() == p.as_str()), "{p}");
        }
    }
}
