//! Trusted publishing: verifying a CI job's OpenID Connect ID token and
//! reading from its claims which CI job it is.
//!
//! A CI platform (GitHub Actions, GitLab CI) signs a short-lived JWT that
//! says which repository, workflow, ref and run a job is. The operator lists
//! the issuers the registry trusts; [`IdTokenVerifier::verify`] checks a token
//! against them:
//!
//! 1. the unverified payload names the issuer, which must be a trusted one;
//! 2. the issuer's signing keys come from its discovery document
//!    (`{issuer}/.well-known/openid-configuration` → `jwks_uri`), cached per
//!    issuer and fetched again when a token names a key id (`kid`) the cache
//!    lacks — how issuers rotate keys — at most once a second per issuer
//!    ([`keys`]);
//! 3. `jsonwebtoken` checks the signature with that key, under an algorithm
//!    of the key's own family (never a symmetric one), then the issuer, the
//!    audience, `exp` and `nbf` with [`LEEWAY_SECS`] of leeway; `iat` may not
//!    be more than that ahead, and `jti` must be present;
//! 4. the claims become an [`Identity`] ([`claims`]): GitHub's `repository`
//!    and the workflow file of `job_workflow_ref`, or GitLab's `project_path`
//!    and the configuration path of `ci_config_ref_uri`, with environment,
//!    ref, sha and run.
//!
//! Which trusted publisher accepts the identity, refusing a replayed `jti`
//! and issuing the registry token are the registry's: the server's
//! `models::trusted_publisher` and `controllers::oidc`. Every refusal here is
//! a [`TrustPubError`] whose message names what did not check out.
//!
//! The crate knows nothing of the registry's database or web framework.

pub mod claims;
mod error;
pub mod issuer;
pub mod keys;
mod verify;

pub use claims::Identity;
pub use error::TrustPubError;
pub use issuer::{parse_issuer, GITHUB_ISSUER, GITLAB_ISSUER};
pub use verify::{IdTokenVerifier, Options, DEFAULT_AUDIENCE, LEEWAY_SECS};
