//! The crate's one error type.

/// Why an ID token was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum TrustPubError {
    /// No issuer is trusted: trusted publishing is off.
    #[error("trusted publishing is off on this registry (its operator enables it with --trusted-issuer)")]
    Off,
    /// The token does not verify; the message names what did not check out
    /// (`unknown issuer: …`, `bad signature: …`, `expired: …`, `token: …`).
    #[error("{0}")]
    Refused(String),
    /// The issuer's signing keys could not be read: the registry's problem
    /// (or the issuer's), not the client's.
    #[error("could not read the issuer's signing keys ({what}: {why})")]
    IssuerUnreachable { what: String, why: String },
}

impl TrustPubError {
    pub(crate) fn refused(message: impl Into<String>) -> TrustPubError {
        TrustPubError::Refused(message.into())
    }
}
