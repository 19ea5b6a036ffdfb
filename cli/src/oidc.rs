//! Trusted publishing, the CI job's side: where `toolreg publish` gets an
//! OpenID Connect ID token when no registry token is configured.
//!
//! - `TOOLREG_OIDC_TOKEN` holds one already (GitLab's `id_tokens:`, or any
//!   CI that mints them itself);
//! - in GitHub Actions, a job with `permissions: id-token: write` has
//!   `ACTIONS_ID_TOKEN_REQUEST_URL` and `ACTIONS_ID_TOKEN_REQUEST_TOKEN`:
//!   the ID token is requested there for the audience
//!   (`TOOLREG_OIDC_AUDIENCE`, default `toolreg`), the answer being
//!   `{"value": "<JWT>"}`.
//!
//! The registry then trades the ID token for a short-lived token
//! (`POST /api/v1/oidc/exchange`, in [`crate::client`]). Neither token is
//! ever printed; errors name the variable or the answer, never a token.

use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use reqwest::header::AUTHORIZATION;

use crate::client::{network_error, read_capped};
use crate::error::{Error, Result};

/// The audience ID tokens are requested for unless `TOOLREG_OIDC_AUDIENCE` says otherwise.
pub const DEFAULT_AUDIENCE: &str = "toolreg";

/// Largest answer read from the CI platform's ID-token endpoint (a JWT
/// is a few KiB).
const MAX_ID_TOKEN_ANSWER: u64 = 64 * 1024;

/// Largest ID token accepted from the environment or the CI platform.
const MAX_ID_TOKEN: usize = 16 * 1024;

/// A CI job's ID token and where it came from.
pub struct IdToken {
    pub token: String,
    /// `TOOLREG_OIDC_TOKEN` or `GitHub Actions`.
    pub source: &'static str,
}

impl std::fmt::Debug for IdToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdToken")
            .field("token", &"<redacted>")
            .field("source", &self.source)
            .finish()
    }
}

/// What the environment offers, read through `var` (`std::env::var` in the CLI).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Offer {
    /// An ID token in `TOOLREG_OIDC_TOKEN`.
    Token(String),
    /// GitHub Actions' request URL and request token, and the audience.
    Actions {
        url: String,
        request_token: String,
        audience: String,
    },
    /// A GitHub Actions job without `id-token: write`.
    ActionsWithoutPermission,
    /// Nothing.
    None,
}

/// Read the environment (through `var`, so it can be tested).
pub fn offer(var: impl Fn(&str) -> Option<String>) -> Offer {
    let get = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    if let Some(token) = get("TOOLREG_OIDC_TOKEN") {
        return Offer::Token(token.trim().to_string());
    }
    match (
        get("ACTIONS_ID_TOKEN_REQUEST_URL"),
        get("ACTIONS_ID_TOKEN_REQUEST_TOKEN"),
    ) {
        (Some(url), Some(request_token)) => Offer::Actions {
            url,
            request_token,
            audience: get("TOOLREG_OIDC_AUDIENCE").unwrap_or_else(|| DEFAULT_AUDIENCE.to_string()),
        },
        (None, None) if get("GITHUB_ACTIONS").as_deref() == Some("true") => {
            Offer::ActionsWithoutPermission
        }
        (Some(_), None) | (None, Some(_)) => Offer::ActionsWithoutPermission,
        (None, None) => Offer::None,
    }
}

/// The CI job's ID token, if the environment offers one; `registry` is
/// named in the error of a GitHub Actions job that cannot ask for one.
pub fn id_token(registry: &str) -> Result<Option<IdToken>> {
    match offer(|name| std::env::var(name).ok()) {
        Offer::Token(token) => {
            check_shape(&token, "TOOLREG_OIDC_TOKEN")?;
            Ok(Some(IdToken {
                token,
                source: "TOOLREG_OIDC_TOKEN",
            }))
        }
        Offer::Actions {
            url,
            request_token,
            audience,
        } => Ok(Some(IdToken {
            token: request_actions_token(&url, &request_token, &audience)?,
            source: "GitHub Actions",
        })),
        Offer::ActionsWithoutPermission => Err(Error::Oidc(format!(
            "no token for {registry}, and this GitHub Actions job cannot request an ID token \
             (ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN are not both set): \
             give the job `permissions: id-token: write`, or set TOOLREG_TOKEN"
        ))),
        Offer::None => Ok(None),
    }
}

/// A JWT is three base64url parts; anything else is refused here, naming
/// where it came from (and not its contents).
fn check_shape(token: &str, from: &str) -> Result<()> {
    if token.len() > MAX_ID_TOKEN {
        return Err(Error::Oidc(format!(
            "the ID token from {from} is longer than {MAX_ID_TOKEN} bytes"
        )));
    }
    let parts: Vec<&str> = token.split('.').collect();
    let base64url = |p: &&str| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'=')
    };
    if parts.len() != 3 || !parts.iter().all(base64url) {
        return Err(Error::Oidc(format!(
            "the ID token from {from} is not a JWT (three base64url parts joined by `.`)"
        )));
    }
    Ok(())
}

/// Ask GitHub Actions for an ID token for `audience`.
fn request_actions_token(url: &str, request_token: &str, audience: &str) -> Result<String> {
    let mut target = url::Url::parse(url)
        .map_err(|e| Error::Oidc(format!("ACTIONS_ID_TOKEN_REQUEST_URL is not a URL: {e}")))?;
    target.query_pairs_mut().append_pair("audience", audience);
    let shown = url.split('?').next().unwrap_or(url).to_string();
    let http = reqwest::blocking::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(60))
        .user_agent(concat!("toolreg/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| Error::Oidc(format!("cannot make an HTTP client: {e}")))?;
    let response = http
        .get(target)
        .header(AUTHORIZATION, format!("bearer {request_token}"))
        .send()
        .map_err(|e| network_error(&shown, &e))?;
    let status = response.status();
    let body = read_capped(&shown, response, MAX_ID_TOKEN_ANSWER)?;
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body);
        let text: String = text.trim().chars().take(300).collect();
        return Err(Error::Oidc(format!(
            "GitHub Actions refused the ID token request to {shown} ({status}){}",
            if text.is_empty() {
                String::new()
            } else {
                format!(": {text}")
            }
        )));
    }
    #[derive(serde::Deserialize)]
    struct Answer {
        value: String,
    }
    let answer: Answer = serde_json::from_slice(&body).map_err(|e| Error::BadAnswer {
        url: shown.clone(),
        reason: format!("expected {{\"value\": \"<ID token>\"}}: {e}"),
    })?;
    check_shape(&answer.value, "GitHub Actions")?;
    Ok(answer.value)
}

/// The issuer and repository an ID token claims, read without checking
/// its signature (the registry checks it): only to tell the user.
pub fn describe(id_token: &str) -> Option<(String, String)> {
    let payload = id_token.split('.').nth(1)?;
    let bytes = URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let text = |k: &str| claims.get(k).and_then(|v| v.as_str()).map(str::to_string);
    let repository = text("repository").or_else(|| text("project_path"))?;
    Some((text("iss").unwrap_or_default(), repository))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn reads_what_the_ci_offers() {
        assert_eq!(offer(env(&[])), Offer::None);
        assert_eq!(
            offer(env(&[("TOOLREG_OIDC_TOKEN", " a.b.c\n")])),
            Offer::Token("a.b.c".into())
        );
        let actions = [
            (
                "ACTIONS_ID_TOKEN_REQUEST_URL",
                "https://x/t?api-version=2.0",
            ),
            ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "req"),
        ];
        assert_eq!(
            offer(env(&actions)),
            Offer::Actions {
                url: "https://x/t?api-version=2.0".into(),
                request_token: "req".into(),
                audience: "toolreg".into()
            }
        );
        let mut with_aud = actions.to_vec();
        with_aud.push(("TOOLREG_OIDC_AUDIENCE", "other"));
        assert!(
            matches!(offer(env(&with_aud)), Offer::Actions { audience, .. } if audience == "other")
        );
        // TOOLREG_OIDC_TOKEN wins over the Actions variables.
        let mut both = actions.to_vec();
        both.push(("TOOLREG_OIDC_TOKEN", "a.b.c"));
        assert_eq!(offer(env(&both)), Offer::Token("a.b.c".into()));
        assert_eq!(
            offer(env(&[("GITHUB_ACTIONS", "true")])),
            Offer::ActionsWithoutPermission
        );
        assert_eq!(offer(env(&actions[..1])), Offer::ActionsWithoutPermission);
    }

    #[test]
    fn a_token_that_is_not_a_jwt_is_refused_without_showing_it() {
        let err = check_shape("s3cr3t-not-a-jwt", "TOOLREG_OIDC_TOKEN").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("TOOLREG_OIDC_TOKEN") && text.contains("not a JWT"),
            "{text}"
        );
        assert!(!text.contains("s3cr3t"), "{text}");
        assert!(check_shape("aGVhZA.eyJ4IjoxfQ.c2ln", "x").is_ok());
    }

    #[test]
    fn describes_github_and_gitlab_claims() {
        let jwt = |claims: serde_json::Value| {
            format!(
                "e30.{}.c2ln",
                URL_SAFE_NO_PAD.encode(claims.to_string().as_bytes())
            )
        };
        assert_eq!(
            describe(&jwt(
                serde_json::json!({"iss": "https://gh", "repository": "acme/tools"})
            )),
            Some(("https://gh".into(), "acme/tools".into()))
        );
        assert_eq!(
            describe(&jwt(
                serde_json::json!({"iss": "https://gitlab.com", "project_path": "g/p"})
            )),
            Some(("https://gitlab.com".into(), "g/p".into()))
        );
        assert_eq!(describe("garbage"), None);
    }
}
