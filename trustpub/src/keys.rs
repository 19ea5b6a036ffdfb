//! The issuers' signing keys: fetched through each issuer's discovery
//! document, cached per issuer, fetched again when a token names a key id
//! the cache lacks (how issuers rotate keys), at most once per
//! [`REFETCH_INTERVAL`] per issuer, one fetch at a time per issuer and
//! within [`FETCH_TIMEOUT`]; and the algorithms each key may verify.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet};
use jsonwebtoken::Algorithm;
use serde_json::Value;
use tokio::sync::Mutex;

use crate::issuer::parse_issuer;
use crate::TrustPubError;

/// Largest discovery document or key set read from an issuer.
const MAX_DOCUMENT: usize = 1024 * 1024;
/// How long an issuer's keys are kept before they are fetched again anyway.
pub const KEYS_TTL: Duration = Duration::from_secs(3600);
/// The least time between two fetches of one issuer's keys.
pub const REFETCH_INTERVAL: Duration = Duration::from_secs(1);

/// How long one fetch of an issuer's discovery document and key set may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// The issuers' keys, cached. Each issuer has its own slot and lock: a
/// fetch holds only its issuer's lock, so a slow issuer never stalls
/// another's tokens, and the tokens of one issuer that need a fetch wait
/// for the one in flight instead of starting their own.
#[derive(Default)]
pub struct KeyCache {
    issuers: std::sync::Mutex<HashMap<String, Arc<Mutex<Option<IssuerKeys>>>>>,
}

struct IssuerKeys {
    keys: JwkSet,
    fetched: Instant,
}

impl KeyCache {
    /// The issuer's key `kid` (or its only key when the token names none),
    /// from the cache or freshly fetched with `http`. A key the cache lacks
    /// is fetched again, at most once per [`REFETCH_INTERVAL`]: within it,
    /// the request waits for the next fetch rather than being refused, so a
    /// key the issuer just rotated in is found.
    pub async fn key(
        &self,
        http: &reqwest::Client,
        issuer: &str,
        kid: Option<&str>,
    ) -> Result<Jwk, TrustPubError> {
        let slot = {
            let mut issuers = self
                .issuers
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            issuers.entry(issuer.to_string()).or_default().clone()
        };
        let mut cached = slot.lock().await;
        if let Some(c) = cached.as_ref() {
            if c.fetched.elapsed() < KEYS_TTL {
                if let Some(jwk) = pick(&c.keys, kid) {
                    return Ok(jwk);
                }
                let since = c.fetched.elapsed();
                if since < REFETCH_INTERVAL {
                    tokio::time::sleep(REFETCH_INTERVAL - since).await;
                }
            }
        }
        let keys = tokio::time::timeout(FETCH_TIMEOUT, fetch_keys(http, issuer))
            .await
            .map_err(|_| {
                unreachable(
                    issuer,
                    &format!("no answer within {} s", FETCH_TIMEOUT.as_secs()),
                )
            })??;
        let found = pick(&keys, kid);
        *cached = Some(IssuerKeys {
            keys,
            fetched: Instant::now(),
        });
        found.ok_or_else(|| unknown_key(kid))
    }
}

/// The issuer's key set, through its discovery document.
async fn fetch_keys(http: &reqwest::Client, issuer: &str) -> Result<JwkSet, TrustPubError> {
    let discovery: Value =
        get_json(http, &format!("{issuer}/.well-known/openid-configuration")).await?;
    let jwks_uri = discovery["jwks_uri"]
        .as_str()
        .ok_or_else(|| unreachable(issuer, "its discovery document has no `jwks_uri`"))?;
    parse_issuer(jwks_uri).map_err(|e| unreachable(issuer, &format!("jwks_uri {e}")))?;
    let set: Value = get_json(http, jwks_uri).await?;
    serde_json::from_value(set)
        .map_err(|e| unreachable(issuer, &format!("its key set does not parse: {e}")))
}

async fn get_json(http: &reqwest::Client, url: &str) -> Result<Value, TrustPubError> {
    let mut res = http
        .get(url)
        .send()
        .await
        .map_err(|e| unreachable(url, &e.to_string()))?;
    if !res.status().is_success() {
        return Err(unreachable(url, &format!("HTTP {}", res.status())));
    }
    let mut body = Vec::new();
    while let Some(chunk) = res
        .chunk()
        .await
        .map_err(|e| unreachable(url, &e.to_string()))?
    {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_DOCUMENT {
            return Err(unreachable(url, "the document is over 1 MiB"));
        }
    }
    serde_json::from_slice(&body).map_err(|e| unreachable(url, &format!("not JSON: {e}")))
}

fn pick(set: &JwkSet, kid: Option<&str>) -> Option<Jwk> {
    match kid {
        Some(kid) => set.find(kid).cloned(),
        None if set.keys.len() == 1 => set.keys.first().cloned(),
        None => None,
    }
}

fn unknown_key(kid: Option<&str>) -> TrustPubError {
    TrustPubError::refused(match kid {
        Some(kid) => format!("bad signature: the issuer publishes no key `{kid}`"),
        None => "bad signature: the ID token names no key (`kid`) and the issuer has several"
            .to_string(),
    })
}

/// The issuer's keys could not be read (logged here, once, with the cause).
fn unreachable(what: &str, why: &str) -> TrustPubError {
    tracing::warn!(issuer = %what, error = %why, "could not read an OpenID Connect issuer's keys");
    TrustPubError::IssuerUnreachable {
        what: what.to_string(),
        why: why.to_string(),
    }
}

/// The asymmetric algorithms a JWK may verify: those of its key type (and
/// only its declared `alg` when it declares one). Symmetric keys are refused.
pub fn algorithms_for(jwk: &Jwk) -> Result<Vec<Algorithm>, TrustPubError> {
    let family: &[Algorithm] = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => &[
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ],
        AlgorithmParameters::EllipticCurve(_) => &[Algorithm::ES256, Algorithm::ES384],
        AlgorithmParameters::OctetKeyPair(_) => &[Algorithm::EdDSA],
        _ => {
            return Err(TrustPubError::refused(
                "bad signature: the issuer's key is not a public signing key",
            ))
        }
    };
    let declared = jwk
        .common
        .key_algorithm
        .and_then(|a| a.to_string().parse::<Algorithm>().ok());
    Ok(match declared {
        Some(a) if family.contains(&a) => vec![a],
        _ => family.to_vec(),
    })
}
