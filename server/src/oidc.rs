//! Trusted publishing: verifying a CI job's OpenID Connect ID token.
//!
//! A CI platform (GitHub Actions, GitLab CI) signs a short-lived JWT that
//! says which repository, workflow, ref and run a job is. The operator lists
//! the issuers the registry trusts (`--trusted-issuer`); [`Oidc::verify`]
//! checks a token against them:
//!
//! 1. the unverified payload names the issuer, which must be a trusted one;
//! 2. the issuer's signing keys come from its discovery document
//!    (`{issuer}/.well-known/openid-configuration` → `jwks_uri`), cached per
//!    issuer and fetched again when a token names a key id (`kid`) the cache
//!    lacks — how issuers rotate keys — at most once a second per issuer;
//! 3. `jsonwebtoken` checks the signature with that key, under an algorithm
//!    of the key's own family (never a symmetric one), then the issuer, the
//!    audience (`--oidc-audience`), `exp` and `nbf` with 60 s of leeway; `iat`
//!    may not be more than 60 s ahead, and `jti` must be present;
//! 4. the claims become an [`Identity`]: GitHub's `repository` and the
//!    workflow file of `job_workflow_ref`, or GitLab's `project_path` and the
//!    configuration path of `ci_config_ref_uri`, with environment, ref, sha
//!    and run.
//!
//! Matching the identity against a tool's trusted publishers, refusing a
//! replayed `jti` and issuing the token happen in
//! `controllers::oidc`. Every refusal here is a 401 whose detail names what
//! did not check out.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;
use tokio::sync::Mutex;

use crate::error::{internal, unauthorized, AppError, AppResult};

/// GitHub Actions' issuer.
pub const GITHUB_ISSUER: &str = "https://token.actions.githubusercontent.com";
/// GitLab.com's issuer (self-managed GitLab issues as its own URL).
pub const GITLAB_ISSUER: &str = "https://gitlab.com";
/// The audience ID tokens must be minted for, unless `--oidc-audience` says otherwise.
pub const DEFAULT_AUDIENCE: &str = "toolreg";
/// Clock skew allowed on `exp`, `nbf` and `iat`, in seconds.
pub const LEEWAY_SECS: u64 = 60;
/// Largest discovery document or key set read from an issuer.
const MAX_DOCUMENT: usize = 1024 * 1024;
/// How long an issuer's keys are kept before they are fetched again anyway.
const KEYS_TTL: Duration = Duration::from_secs(3600);
/// The least time between two fetches of one issuer's keys.
const REFETCH_INTERVAL: Duration = Duration::from_secs(1);

/// What the operator configured.
#[derive(Debug, Clone, Default)]
pub struct OidcOptions {
    /// Trusted issuers, without a trailing `/`; empty turns trusted publishing off.
    pub issuers: Vec<String>,
    pub audience: String,
}

/// Check an issuer URL from the configuration: `https://`, or `http://`
/// for a loopback host only (a local issuer in tests). Returns it without
/// a trailing `/`.
pub fn parse_issuer(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text.trim()).map_err(|e| format!("`{text}` is not a URL: {e}"))?;
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost",
        None => false,
    };
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        "http" => {
            return Err(format!(
                "`{text}`: an issuer must use https (http only for a loopback host)"
            ))
        }
        other => return Err(format!("`{text}`: unsupported scheme `{other}`")),
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("`{text}`: an issuer has no query or fragment"));
    }
    Ok(text.trim().trim_end_matches('/').to_string())
}

/// Who a verified ID token says the CI job is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub issuer: String,
    pub repository: String,
    /// The workflow file (GitHub, e.g. `release.yml`) or the CI
    /// configuration path (GitLab, e.g. `.gitlab-ci.yml`).
    pub workflow: String,
    pub environment: Option<String>,
    pub git_ref: String,
    pub sha: String,
    pub run_id: String,
    pub jti: String,
    /// The ID token's `exp`, seconds since the epoch.
    pub expires_at: i64,
}

/// The verifier: configuration, an HTTP client and the issuers' cached keys.
pub struct Oidc {
    options: OidcOptions,
    /// Built on first use: a server without trusted issuers never loads
    /// the TLS roots.
    http: std::sync::OnceLock<reqwest::Client>,
    keys: Mutex<HashMap<String, IssuerKeys>>,
}

struct IssuerKeys {
    keys: JwkSet,
    fetched: Instant,
}

impl Oidc {
    pub fn new(options: OidcOptions) -> Oidc {
        Oidc {
            options,
            http: std::sync::OnceLock::new(),
            keys: Mutex::new(HashMap::new()),
        }
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

    /// Verify `token` (see the module docs) and read the identity from it.
    pub async fn verify(&self, token: &str) -> AppResult<Identity> {
        if self.options.issuers.is_empty() {
            return Err(AppError::Forbidden(
                "trusted publishing is off on this registry (its operator enables it with --trusted-issuer)".into(),
            ));
        }
        let token = token.trim();
        let unverified = jsonwebtoken::dangerous::insecure_decode::<Value>(token)
            .map_err(|e| unauthorized(format!("token: not a JWT ({e})")))?;
        let issuer = unverified.claims["iss"]
            .as_str()
            .ok_or_else(|| unauthorized("token: the ID token has no `iss` claim"))?
            .trim_end_matches('/')
            .to_string();
        if !self.options.issuers.contains(&issuer) {
            return Err(unauthorized(format!(
                "unknown issuer: `{issuer}` is not an issuer this registry trusts"
            )));
        }
        let kid = unverified.header.kid.clone();
        let jwk = self.key(&issuer, kid.as_deref()).await?;
        let algorithms = algorithms_for(&jwk)?;
        let key = DecodingKey::from_jwk(&jwk).map_err(|e| {
            unauthorized(format!("bad signature: the issuer's key is unusable ({e})"))
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
                return Err(unauthorized(
                    "not yet valid: the ID token's `iat` is in the future",
                ));
            }
        }
        identity(issuer, &claims)
    }

    /// A decoding failure as a 401 naming what failed.
    fn refusal(&self, issuer: &str, e: jsonwebtoken::errors::Error) -> AppError {
        use jsonwebtoken::errors::ErrorKind;
        unauthorized(match e.kind() {
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

    /// The issuer's key `kid` (or its only key when the token names none),
    /// from the cache or freshly fetched.
    async fn key(&self, issuer: &str, kid: Option<&str>) -> AppResult<Jwk> {
        let mut cache = self.keys.lock().await;
        if let Some(cached) = cache.get(issuer) {
            if cached.fetched.elapsed() < KEYS_TTL {
                if let Some(jwk) = pick(&cached.keys, kid) {
                    return Ok(jwk);
                }
                if cached.fetched.elapsed() < REFETCH_INTERVAL {
                    return Err(unknown_key(kid));
                }
            }
        }
        let keys = self.fetch_keys(issuer).await?;
        let found = pick(&keys, kid);
        cache.insert(
            issuer.to_string(),
            IssuerKeys {
                keys,
                fetched: Instant::now(),
            },
        );
        found.ok_or_else(|| unknown_key(kid))
    }

    /// The issuer's key set, through its discovery document.
    async fn fetch_keys(&self, issuer: &str) -> AppResult<JwkSet> {
        let discovery: Value = self
            .get_json(&format!("{issuer}/.well-known/openid-configuration"))
            .await?;
        let jwks_uri = discovery["jwks_uri"].as_str().ok_or_else(|| {
            issuer_unreachable(issuer, "its discovery document has no `jwks_uri`")
        })?;
        parse_issuer(jwks_uri).map_err(|e| issuer_unreachable(issuer, &format!("jwks_uri {e}")))?;
        let set: Value = self.get_json(jwks_uri).await?;
        serde_json::from_value(set)
            .map_err(|e| issuer_unreachable(issuer, &format!("its key set does not parse: {e}")))
    }

    async fn get_json(&self, url: &str) -> AppResult<Value> {
        let mut res = self
            .http()
            .get(url)
            .send()
            .await
            .map_err(|e| issuer_unreachable(url, &e.to_string()))?;
        if !res.status().is_success() {
            return Err(issuer_unreachable(url, &format!("HTTP {}", res.status())));
        }
        let mut body = Vec::new();
        while let Some(chunk) = res
            .chunk()
            .await
            .map_err(|e| issuer_unreachable(url, &e.to_string()))?
        {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_DOCUMENT {
                return Err(issuer_unreachable(url, "the document is over 1 MiB"));
            }
        }
        serde_json::from_slice(&body)
            .map_err(|e| issuer_unreachable(url, &format!("not JSON: {e}")))
    }
}

fn pick(set: &JwkSet, kid: Option<&str>) -> Option<Jwk> {
    match kid {
        Some(kid) => set.find(kid).cloned(),
        None if set.keys.len() == 1 => set.keys.first().cloned(),
        None => None,
    }
}

fn unknown_key(kid: Option<&str>) -> AppError {
    unauthorized(match kid {
        Some(kid) => format!("bad signature: the issuer publishes no key `{kid}`"),
        None => "bad signature: the ID token names no key (`kid`) and the issuer has several"
            .to_string(),
    })
}

/// The issuer's keys could not be read: the registry's problem (or the
/// issuer's), not the client's.
fn issuer_unreachable(what: &str, why: &str) -> AppError {
    tracing::warn!(issuer = %what, error = %why, "could not read an OpenID Connect issuer's keys");
    internal(format!(
        "could not read the issuer's signing keys ({what}: {why})"
    ))
}

/// The asymmetric algorithms a JWK may verify: those of its key type (and
/// only its declared `alg` when it declares one). Symmetric keys are refused.
fn algorithms_for(jwk: &Jwk) -> AppResult<Vec<Algorithm>> {
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
            return Err(unauthorized(
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

/// The identity in verified claims: GitHub's or GitLab's shape.
fn identity(issuer: String, claims: &Value) -> AppResult<Identity> {
    let text = |name: &str| claims[name].as_str().map(str::to_string);
    let number_or_text = |name: &str| match &claims[name] {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let jti = text("jti").ok_or_else(|| unauthorized("token: the ID token has no `jti` claim"))?;
    let expires_at = claims["exp"].as_i64().unwrap_or_default();
    let missing = |c: &str| unauthorized(format!("token: the ID token has no `{c}` claim"));
    let (repository, workflow, run_id) = if let Some(job) = text("job_workflow_ref") {
        // GitHub: `org/repo/.github/workflows/release.yml@refs/tags/v1`.
        let repository = text("repository").ok_or_else(|| missing("repository"))?;
        let path = job.split('@').next().unwrap_or_default();
        let file = path
            .strip_prefix(&format!("{repository}/"))
            .unwrap_or(path)
            .trim_start_matches(".github/workflows/")
            .to_string();
        let run = number_or_text("run_id").ok_or_else(|| missing("run_id"))?;
        (repository, file, run)
    } else if let Some(config) = text("ci_config_ref_uri") {
        // GitLab: `gitlab.com/group/project//.gitlab-ci.yml@refs/heads/main`.
        let repository = text("project_path").ok_or_else(|| missing("project_path"))?;
        let path = config.split('@').next().unwrap_or_default();
        let file = path
            .split_once("//")
            .map(|(_, f)| f)
            .unwrap_or(path)
            .to_string();
        let run = number_or_text("pipeline_id").ok_or_else(|| missing("pipeline_id"))?;
        (repository, file, run)
    } else {
        return Err(unauthorized(
            "token: the ID token names no workflow (expected GitHub's `job_workflow_ref` or GitLab's `ci_config_ref_uri`)",
        ));
    };
    Ok(Identity {
        issuer,
        repository,
        workflow,
        environment: text("environment").filter(|e| !e.is_empty()),
        git_ref: text("ref").unwrap_or_default(),
        sha: text("sha").unwrap_or_default(),
        run_id,
        jti,
        expires_at,
    })
}

#[cfg(test)]
mod tests {
    use super::{identity, parse_issuer};
    use serde_json::json;

    #[test]
    fn issuers_need_https_except_on_loopback() {
        assert!(parse_issuer("https://token.actions.githubusercontent.com/").is_ok());
        assert!(parse_issuer("http://127.0.0.1:9999").is_ok());
        assert!(parse_issuer("http://localhost:1").is_ok());
        assert!(parse_issuer("http://issuer.example").is_err());
        assert!(parse_issuer("ftp://x").is_err());
        assert!(parse_issuer("nonsense").is_err());
    }

    #[test]
    fn github_and_gitlab_claims_name_repository_and_workflow() {
        let gh = identity(
            "https://token.actions.githubusercontent.com".into(),
            &json!({"jti": "j", "exp": 1, "repository": "acme/tools",
                    "job_workflow_ref": "acme/tools/.github/workflows/release.yml@refs/tags/v1",
                    "ref": "refs/tags/v1", "sha": "abc", "run_id": "42", "environment": "prod"}),
        )
        .expect("github");
        assert_eq!(
            (
                gh.repository.as_str(),
                gh.workflow.as_str(),
                gh.run_id.as_str()
            ),
            ("acme/tools", "release.yml", "42")
        );
        assert_eq!(gh.environment.as_deref(), Some("prod"));
        let gl = identity(
            "https://gitlab.com".into(),
            &json!({"jti": "j", "exp": 1, "project_path": "acme/tools",
                    "ci_config_ref_uri": "gitlab.com/acme/tools//.gitlab-ci.yml@refs/heads/main",
                    "ref": "main", "sha": "abc", "pipeline_id": 7}),
        )
        .expect("gitlab");
        assert_eq!(
            (
                gl.repository.as_str(),
                gl.workflow.as_str(),
                gl.run_id.as_str()
            ),
            ("acme/tools", ".gitlab-ci.yml", "7")
        );
        assert!(identity("x".into(), &json!({"jti": "j", "repository": "a/b"})).is_err());
    }
}
