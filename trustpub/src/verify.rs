//! [`IdTokenVerifier`]: the configuration (trusted issuers, audience), an HTTP
//! client and the issuers' cached keys, and the check of one ID token.

use std::time::Duration;

use jsonwebtoken::{DecodingKey, Validation};
use serde_json::Value;

use crate::claims::{identity, Identity};
use crate::keys::{algorithms_for, KeyCache};
use crate::TrustPubError;

/// The audience ID tokens must be minted for, unless configured otherwise.
pub const DEFAULT_AUDIENCE: &str = "toolreg";
/// Clock skew allowed on `exp`, `nbf` and `iat`, in seconds.
pub const LEEWAY_SECS: u64 = 60;

/// What the operator configured.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Trusted issuers, without a trailing `/`; empty turns trusted publishing off.
    pub issuers: Vec<String>,
    pub audience: String,
}

/// The verifier: configuration, an HTTP client and the issuers' cached keys.
pub struct IdTokenVerifier {
    options: Options,
    /// Built on first use: a registry without trusted issuers never loads
    /// the TLS roots.
    http: std::sync::OnceLock<reqwest::Client>,
    keys: KeyCache,
}

impl IdTokenVerifier {
    pub fn new(options: Options) -> IdTokenVerifier {
        IdTokenVerifier {
            options,
            http: std::sync::OnceLock::new(),
            keys: KeyCache::default(),
        }
    }

    /// A verifier that trusts no issuer: trusted publishing is off.
    pub fn off() -> IdTokenVerifier {
        IdTokenVerifier::new(Options {
            issuers: Vec::new(),
            audience: DEFAULT_AUDIENCE.to_string(),
        })
    }

    fn http(&self) -> &reqwest::Client {
        self.http.get_or_init(|| {
            reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap_or_default()
        })
    }

    /// The trusted issuers (empty: trusted publishing is off).
    pub fn issuers(&self) -> &[String] {
        &self.options.issuers
    }

    pub fn audience(&self) -> &str {
        &self.options.audience
    }

    /// Verify `token` (see the crate docs) and read the identity from it.
    pub async fn verify(&self, token: &str) -> Result<Identity, TrustPubError> {
        if self.options.issuers.is_empty() {
            return Err(TrustPubError::Off);
        }
        let token = token.trim();
        let unverified = jsonwebtoken::dangerous::insecure_decode::<Value>(token)
            .map_err(|e| TrustPubError::refused(format!("token: not a JWT ({e})")))?;
        let issuer = unverified.claims["iss"]
            .as_str()
            .ok_or_else(|| TrustPubError::refused("token: the ID token has no `iss` claim"))?
            .trim_end_matches('/')
            .to_string();
        if !self.options.issuers.contains(&issuer) {
            return Err(TrustPubError::refused(format!(
                "unknown issuer: `{issuer}` is not an issuer this registry trusts"
            )));
        }
        let kid = unverified.header.kid.clone();
        let jwk = self.keys.key(self.http(), &issuer, kid.as_deref()).await?;
        let algorithms = algorithms_for(&jwk)?;
        let key = DecodingKey::from_jwk(&jwk).map_err(|e| {
            TrustPubError::refused(format!("bad signature: the issuer's key is unusable ({e})"))
        })?;
        let mut validation = Validation::new(algorithms[0]);
        validation.algorithms = algorithms;
        validation.leeway = LEEWAY_SECS;
        validation.validate_nbf = true;
        validation.set_audience(&[&self.options.audience]);
        validation.set_issuer(&[&issuer, &format!("{issuer}/")]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data = jsonwebtoken::decode::<Value>(token, &key, &validation)
            .map_err(|e| self.refusal(&issuer, e))?;
        let claims = data.claims;
        let now = chrono::Utc::now().timestamp();
        if let Some(iat) = claims["iat"].as_i64() {
            if iat > now + LEEWAY_SECS as i64 {
                return Err(TrustPubError::refused(
                    "not yet valid: the ID token's `iat` is in the future",
                ));
            }
        }
        identity(issuer, &claims)
    }

    /// A decoding failure, naming what failed.
    fn refusal(&self, issuer: &str, e: jsonwebtoken::errors::Error) -> TrustPubError {
        use jsonwebtoken::errors::ErrorKind;
        TrustPubError::refused(match e.kind() {
            ErrorKind::InvalidSignature => "bad signature: the ID token's signature does not verify with the issuer's key".to_string(),
            ErrorKind::ExpiredSignature => "expired: the ID token's `exp` has passed".to_string(),
            ErrorKind::ImmatureSignature => "not yet valid: the ID token's `nbf` is in the future".to_string(),
            ErrorKind::InvalidAudience => format!(
                "wrong audience: the ID token's `aud` is not `{}` (request the token with that audience)",
                self.options.audience
            ),
            ErrorKind::InvalidIssuer => format!("unknown issuer: the ID token's `iss` is not `{issuer}`"),
            ErrorKind::InvalidAlgorithm => "bad signature: the ID token's `alg` does not fit the issuer's key".to_string(),
            ErrorKind::MissingRequiredClaim(c) => format!("token: the ID token has no `{c}` claim"),
            _ => format!("token: the ID token does not verify ({e})"),
        })
    }
}
