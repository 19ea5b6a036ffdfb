//! Who a verified ID token says the CI job is: the claims of GitHub Actions
//! and GitLab CI mapped to one [`Identity`].

use serde_json::Value;

use crate::TrustPubError;

/// Who a verified ID token says the CI job is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub issuer: String,
    /// `org/repo` (GitHub) or `group/project` (GitLab).
    pub repository: String,
    /// The provider's immutable ID of the repository (GitHub
    /// `repository_id`, GitLab `project_id`): unlike the name, it is never
    /// given to another repository.
    pub repository_id: Option<String>,
    /// The provider's immutable ID of the repository's owner (GitHub
    /// `repository_owner_id`, GitLab `namespace_id`).
    pub owner_id: Option<String>,
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

/// Latest `exp` accepted: the end of the year 9999.
const MAX_EXP: i64 = 253_402_300_799;

/// The `exp` claim as whole seconds since the epoch, normalised once: a
/// fractional one is rounded up (so a replay record lasts until the real
/// expiry), and one that is not a time in 1970–9999 is refused.
fn expiry(exp: &Value) -> Result<i64, TrustPubError> {
    let seconds = match exp {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite() && *f > 0.0 && *f <= MAX_EXP as f64)
                .map(|f| f.ceil() as i64)
        }),
        _ => None,
    };
    seconds
        .filter(|s| (1..=MAX_EXP).contains(s))
        .ok_or_else(|| {
            TrustPubError::refused(
                "token: the ID token's `exp` is not a time (seconds since 1970, before the year 10000)",
            )
        })
}

/// The identity in verified claims: GitHub's or GitLab's shape.
pub fn identity(issuer: String, claims: &Value) -> Result<Identity, TrustPubError> {
    let text = |name: &str| claims[name].as_str().map(str::to_string);
    let number_or_text = |name: &str| match &claims[name] {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let missing =
        |c: &str| TrustPubError::refused(format!("token: the ID token has no `{c}` claim"));
    let jti = text("jti").ok_or_else(|| missing("jti"))?;
    let expires_at = expiry(&claims["exp"])?;
    let github = claims.get("job_workflow_ref").is_some();
    let (repository_id, owner_id) = if github {
        (
            number_or_text("repository_id"),
            number_or_text("repository_owner_id"),
        )
    } else {
        (number_or_text("project_id"), number_or_text("namespace_id"))
    };
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
        return Err(TrustPubError::refused(
            "token: the ID token names no workflow (expected GitHub's `job_workflow_ref` or GitLab's `ci_config_ref_uri`)",
        ));
    };
    Ok(Identity {
        issuer,
        repository,
        repository_id: repository_id.filter(|id| !id.is_empty()),
        owner_id: owner_id.filter(|id| !id.is_empty()),
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
    use super::identity;
    use serde_json::json;

    #[test]
    fn github_and_gitlab_claims_name_repository_and_workflow() {
        let gh = identity(
            "https://token.actions.githubusercontent.com".into(),
            &json!({"jti": "j", "exp": 1, "repository": "acme/tools",
                    "job_workflow_ref": "acme/tools/.github/workflows/release.yml@refs/tags/v1",
                    "ref": "refs/tags/v1", "sha": "abc", "run_id": "42", "environment": "prod",
                    "repository_id": "101", "repository_owner_id": 7}),
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
        assert_eq!(
            (gh.repository_id.as_deref(), gh.owner_id.as_deref()),
            (Some("101"), Some("7"))
        );
        let gl = identity(
            "https://gitlab.com".into(),
            &json!({"jti": "j", "exp": 1, "project_path": "acme/tools",
                    "ci_config_ref_uri": "gitlab.com/acme/tools//.gitlab-ci.yml@refs/heads/main",
                    "ref": "main", "sha": "abc", "pipeline_id": 7,
                    "project_id": "55", "namespace_id": 9}),
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
        assert_eq!(
            (gl.repository_id.as_deref(), gl.owner_id.as_deref()),
            (Some("55"), Some("9"))
        );
        assert!(identity("x".into(), &json!({"jti": "j", "repository": "a/b"})).is_err());
    }
}
