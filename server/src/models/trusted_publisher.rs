//! Trusted publishers: per tool, a CI identity — OpenID Connect issuer,
//! repository, workflow file and optionally deployment environment — whose
//! ID tokens `POST /api/v1/oidc/exchange` trades for a short-lived token
//! that publishes new versions of that tool (the tokens are verified by
//! `toolreg_trustpub`). Whether one accepts a CI job is one method,
//! [`TrustedPublisher::judge`], asked by the exchange and by every
//! publish with such a token.
//!
//! A repository's name is not an identity: once a repository is deleted or
//! its owner renamed, anyone may create one with the same name. So a
//! trusted publisher is also bound to the provider's immutable IDs of the
//! repository and its owner (GitHub `repository_id` and
//! `repository_owner_id`, GitLab `project_id` and `namespace_id`), given
//! by the owner when they add it or recorded by the first verified
//! exchange. From then on the IDs decide: a job of a repository with the
//! bound ID is accepted under a new name (a rename, and the trusted
//! publisher takes the new name), and a job of a repository with the same
//! name but another ID, or whose owner ID changed (a transfer), is refused
//! ([`Match::Recreated`]).

use chrono::NaiveDateTime;
use diesel::prelude::*;
use toolreg_api::{EncodableTrustedPublisher, Provenance};

use crate::db::{now, DbConnection};
use crate::encode::rfc3339;
use crate::error::{bad_request, internal, AppResult};
use crate::schema::{tools, trusted_publishers, users};
use toolreg_trustpub::Identity;

/// Longest repository, workflow or environment accepted, in bytes.
pub const MAX_FIELD: usize = 200;
/// Most trusted publishers one tool may have.
pub const MAX_PER_TOOL: i64 = 20;

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = trusted_publishers)]
pub struct TrustedPublisher {
    pub id: i64,
    pub tool_id: i64,
    pub issuer: String,
    pub repository: String,
    pub workflow: String,
    pub environment: Option<String>,
    pub created_by: i64,
    pub created_at: NaiveDateTime,
    /// Whether the token that added it was an agent token: a token
    /// exchanged through it never carries more than that token could, so it
    /// is an agent token too.
    pub creator_agent: bool,
    /// The provider's immutable repository ID, once known.
    pub repository_id: Option<String>,
    /// The provider's immutable owner ID, once known.
    pub owner_id: Option<String>,
}

/// A CI job, as a trusted publisher is asked whether it accepts it.
#[derive(Debug, Clone, Copy)]
pub struct CiJob<'a> {
    pub issuer: &'a str,
    pub repository: &'a str,
    pub workflow: &'a str,
    pub environment: JobEnvironment<'a>,
    pub ids: JobIds<'a>,
}

/// The provider's immutable IDs of a [`CiJob`]'s repository and owner.
#[derive(Debug, Clone, Copy)]
pub enum JobIds<'a> {
    /// What the job's ID token claims (`None`: it carried no such claim).
    Claimed {
        repository: Option<&'a str>,
        owner: Option<&'a str>,
    },
    /// Not known: provenance recorded before the registry kept the IDs.
    NotRecorded,
}

/// What a trusted publisher answers a CI job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    /// It accepts the job; `renamed` when the repository kept its bound ID
    /// under a new name.
    Accepts { renamed: bool },
    /// It is about another repository or workflow.
    Other,
    /// The name matches but the bound IDs do not: the repository was
    /// recreated, or another took its name, or it moved to another owner.
    /// Says which, for the 403.
    Recreated(String),
}

/// The deployment environment of a [`CiJob`].
#[derive(Debug, Clone, Copy)]
pub enum JobEnvironment<'a> {
    /// What the job's ID token claims (`None`: it ran in none).
    Claimed(Option<&'a str>),
    /// Not known: a token's stored provenance does not record it, so an
    /// environment named by the trusted publisher is not checked.
    NotRecorded,
}

impl<'a> CiJob<'a> {
    /// The job a verified ID token names.
    pub fn of_identity(identity: &'a toolreg_trustpub::Identity) -> CiJob<'a> {
        CiJob {
            issuer: &identity.issuer,
            repository: &identity.repository,
            workflow: &identity.workflow,
            environment: JobEnvironment::Claimed(identity.environment.as_deref()),
            ids: JobIds::Claimed {
                repository: identity.repository_id.as_deref(),
                owner: identity.owner_id.as_deref(),
            },
        }
    }

    /// The job that a version's (or a token's) provenance records.
    pub fn of_provenance(provenance: &'a Provenance) -> CiJob<'a> {
        CiJob {
            issuer: &provenance.issuer,
            repository: &provenance.repository,
            workflow: &provenance.workflow,
            environment: JobEnvironment::NotRecorded,
            ids: match provenance.repository_id.as_deref() {
                None => JobIds::NotRecorded,
                repository => JobIds::Claimed {
                    repository,
                    owner: provenance.owner_id.as_deref(),
                },
            },
        }
    }
}

/// A trusted publisher as an owner asks for it, checked by [`NewTrustedPublisher::check`].
#[derive(Debug, Clone)]
pub struct NewTrustedPublisher {
    pub issuer: String,
    pub repository: String,
    pub workflow: String,
    pub environment: Option<String>,
    pub repository_id: Option<String>,
    pub owner_id: Option<String>,
}

/// Longest provider ID accepted, in bytes.
pub const MAX_ID: usize = 40;

impl NewTrustedPublisher {
    /// 400 naming the field when one is empty, too long or holds control
    /// characters, or when the issuer is not one this server trusts
    /// (`trusted` lists them, normalized without a trailing `/`).
    pub fn check(mut self, trusted: &[String]) -> AppResult<NewTrustedPublisher> {
        self.issuer = self.issuer.trim().trim_end_matches('/').to_string();
        if !trusted.contains(&self.issuer) {
            return Err(bad_request(if trusted.is_empty() {
                "issuer: this registry trusts no OpenID Connect issuer (its operator enables trusted publishing with --trusted-issuer)".to_string()
            } else {
                format!(
                    "issuer: `{}` is not an issuer this registry trusts (it trusts {})",
                    self.issuer,
                    trusted.join(", ")
                )
            }));
        }
        self.repository = field("repository", &self.repository)?;
        self.workflow = field("workflow", &self.workflow)?;
        // GitHub's claims name the workflow file under .github/workflows;
        // accept its path too.
        if let Some(file) = self.workflow.strip_prefix(".github/workflows/") {
            self.workflow = file.to_string();
        }
        self.environment = match self.environment.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(e) => Some(field("environment", e)?),
        };
        self.repository_id = provider_id("repository_id", self.repository_id)?;
        self.owner_id = provider_id("owner_id", self.owner_id)?;
        Ok(self)
    }
}

/// A provider's ID as an owner gives it: 1–[`MAX_ID`] ASCII letters,
/// digits, `-` or `_` (GitHub's and GitLab's are decimal numbers), or none.
fn provider_id(name: &str, value: Option<String>) -> AppResult<Option<String>> {
    let Some(value) = value.map(|v| v.trim().to_string()) else {
        return Ok(None);
    };
    if value.is_empty()
        || value.len() > MAX_ID
        || !value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(bad_request(format!(
            "{name}: the provider's ID of the repository or owner, 1-{MAX_ID} letters or digits (GitHub's `repository_id` is a number such as 123456789)"
        )));
    }
    Ok(Some(value))
}

fn field(name: &str, value: &str) -> AppResult<String> {
    let value = value.trim();
    if value.is_empty() {
        return Err(bad_request(format!("{name}: must not be empty")));
    }
    if value.len() > MAX_FIELD {
        return Err(bad_request(format!(
            "{name}: at most {MAX_FIELD} bytes (got {})",
            value.len()
        )));
    }
    if value.chars().any(char::is_control) {
        return Err(bad_request(format!(
            "{name}: must not contain control characters"
        )));
    }
    Ok(value.to_string())
}

impl TrustedPublisher {
    /// Does this trusted publisher accept `job`? The same issuer and
    /// workflow; when it names an environment and the job's is known, the
    /// same environment; and the same repository: by its bound IDs once it
    /// has them (a new name with the bound ID is a rename; the same name
    /// with another ID is [`Match::Recreated`]), by name before.
    pub fn judge(&self, job: &CiJob<'_>) -> Match {
        let environment = match (&self.environment, job.environment) {
            (None, _) | (Some(_), JobEnvironment::NotRecorded) => true,
            (Some(wanted), JobEnvironment::Claimed(claimed)) => claimed == Some(wanted.as_str()),
        };
        if self.issuer != job.issuer || self.workflow != job.workflow || !environment {
            return Match::Other;
        }
        let same_name = self.repository == job.repository;
        let (claimed_repository, claimed_owner) = match job.ids {
            JobIds::NotRecorded => {
                return if same_name {
                    Match::Accepts { renamed: false }
                } else {
                    Match::Other
                }
            }
            JobIds::Claimed { repository, owner } => (repository, owner),
        };
        let bound_here = match (&self.repository_id, claimed_repository) {
            (None, _) => same_name,
            (Some(bound), Some(claimed)) if bound == claimed => true,
            (Some(bound), claimed) => {
                return if same_name {
                    Match::Recreated(format!(
                        "repository `{}` {}, but its trusted publisher is bound to ID {bound}: the repository was deleted and recreated, or another repository took its name",
                        job.repository,
                        claimed.map_or("carries no repository ID".to_string(), |c| format!("now has ID {c}"))
                    ))
                } else {
                    Match::Other
                };
            }
        };
        if !bound_here {
            return Match::Other;
        }
        if let Some(bound) = &self.owner_id {
            if claimed_owner != Some(bound.as_str()) {
                return Match::Recreated(format!(
                    "repository `{}` {}, but its trusted publisher is bound to owner ID {bound}: the repository moved to another owner",
                    job.repository,
                    claimed_owner.map_or("carries no owner ID".to_string(), |c| format!("now belongs to owner ID {c}"))
                ));
            }
        }
        Match::Accepts {
            renamed: !same_name,
        }
    }

    /// Record what an accepted job of `identity` shows: the IDs this trusted
    /// publisher was not yet bound to, and the repository's new name after
    /// a rename (call inside a write transaction).
    pub fn bind(&self, conn: &mut DbConnection, identity: &Identity) -> AppResult<()> {
        let repository_id = self
            .repository_id
            .clone()
            .or_else(|| identity.repository_id.clone());
        let owner_id = self.owner_id.clone().or_else(|| identity.owner_id.clone());
        if repository_id == self.repository_id
            && owner_id == self.owner_id
            && self.repository == identity.repository
        {
            return Ok(());
        }
        diesel::update(trusted_publishers::table.find(self.id))
            .set((
                trusted_publishers::repository.eq(&identity.repository),
                trusted_publishers::repository_id.eq(&repository_id),
                trusted_publishers::owner_id.eq(&owner_id),
            ))
            .execute(conn)?;
        Ok(())
    }

    /// Whether a trusted publisher of `tool_id` still accepts the CI job
    /// `provenance` records, run in `environment` (every publish with a
    /// token from trusted publishing asks, so removing a trusted publisher
    /// stops the tokens it issued at once, even while another one for the
    /// same workflow but a different environment remains).
    pub fn still_accepts(
        conn: &mut DbConnection,
        tool_id: i64,
        provenance: &Provenance,
        environment: Option<&str>,
    ) -> AppResult<bool> {
        let job = CiJob {
            environment: JobEnvironment::Claimed(environment),
            ..CiJob::of_provenance(provenance)
        };
        Ok(TrustedPublisher::list(conn, tool_id)?
            .iter()
            .any(|t| matches!(t.judge(&job), Match::Accepts { .. })))
    }

    /// The trusted publishers of `tool_id`, oldest first.
    pub fn list(conn: &mut DbConnection, tool_id: i64) -> AppResult<Vec<TrustedPublisher>> {
        Ok(crate::on_backend!(conn, |c| trusted_publishers::table
            .filter(trusted_publishers::tool_id.eq(tool_id))
            .order(trusted_publishers::id.asc())
            .select(TrustedPublisher::as_select())
            .load(c))?)
    }

    /// Add one to `tool_id` (call inside a write transaction). Adding the
    /// same identity twice answers the existing row.
    pub fn add(
        conn: &mut DbConnection,
        tool_id: i64,
        new: &NewTrustedPublisher,
        created_by: i64,
        creator_agent: bool,
    ) -> AppResult<TrustedPublisher> {
        let existing = TrustedPublisher::list(conn, tool_id)?;
        if let Some(same) = existing.iter().find(|t| {
            t.issuer == new.issuer
                && t.repository == new.repository
                && t.workflow == new.workflow
                && t.environment == new.environment
                && (new.repository_id.is_none() || t.repository_id == new.repository_id)
                && (new.owner_id.is_none() || t.owner_id == new.owner_id)
        }) {
            return Ok(same.clone());
        }
        if existing.len() as i64 >= MAX_PER_TOOL {
            return Err(bad_request(format!(
                "a tool may have at most {MAX_PER_TOOL} trusted publishers; remove one first"
            )));
        }
        let id: i64 = diesel::insert_into(trusted_publishers::table)
            .values((
                trusted_publishers::tool_id.eq(tool_id),
                trusted_publishers::issuer.eq(&new.issuer),
                trusted_publishers::repository.eq(&new.repository),
                trusted_publishers::workflow.eq(&new.workflow),
                trusted_publishers::environment.eq(&new.environment),
                trusted_publishers::created_by.eq(created_by),
                trusted_publishers::created_at.eq(now()),
                trusted_publishers::creator_agent.eq(creator_agent),
                trusted_publishers::repository_id.eq(&new.repository_id),
                trusted_publishers::owner_id.eq(&new.owner_id),
            ))
            .returning(trusted_publishers::id)
            .get_result(conn)?;
        TrustedPublisher::find(conn, tool_id, id)?
            .ok_or_else(|| internal("the new trusted publisher vanished"))
    }

    /// The trusted publisher `id` of `tool_id`.
    pub fn find(
        conn: &mut DbConnection,
        tool_id: i64,
        id: i64,
    ) -> AppResult<Option<TrustedPublisher>> {
        Ok(crate::on_backend!(conn, |c| trusted_publishers::table
            .filter(trusted_publishers::tool_id.eq(tool_id))
            .filter(trusted_publishers::id.eq(id))
            .select(TrustedPublisher::as_select())
            .first(c)
            .optional())?)
    }

    /// Remove it (call inside a write transaction).
    pub fn remove(conn: &mut DbConnection, id: i64) -> AppResult<()> {
        diesel::delete(trusted_publishers::table.find(id)).execute(conn)?;
        Ok(())
    }

    /// Every trusted publisher of `issuer` for the repository a verified ID
    /// token names, by name or by its repository ID, with its tool's name,
    /// for matching the token's claims.
    pub fn for_repository(
        conn: &mut DbConnection,
        identity: &Identity,
    ) -> AppResult<Vec<(TrustedPublisher, String)>> {
        // No row has an empty ID, so a token without one matches by name.
        let repository_id = identity.repository_id.as_deref().unwrap_or_default();
        Ok(crate::on_backend!(conn, |c| trusted_publishers::table
            .inner_join(tools::table)
            .filter(trusted_publishers::issuer.eq(&identity.issuer))
            .filter(
                trusted_publishers::repository
                    .eq(&identity.repository)
                    .or(trusted_publishers::repository_id.eq(repository_id)),
            )
            .order(trusted_publishers::id.asc())
            .select((TrustedPublisher::as_select(), tools::name))
            .load(c))?)
    }

    /// The row as the API shows it, with its creator's login.
    pub fn encode(&self, conn: &mut DbConnection) -> AppResult<EncodableTrustedPublisher> {
        let login: String = users::table
            .find(self.created_by)
            .select(users::login)
            .first(conn)?;
        Ok(EncodableTrustedPublisher {
            id: self.id,
            issuer: self.issuer.clone(),
            repository: self.repository.clone(),
            repository_id: self.repository_id.clone(),
            owner_id: self.owner_id.clone(),
            workflow: self.workflow.clone(),
            environment: self.environment.clone(),
            created_by: login,
            created_at: rfc3339(&self.created_at),
        })
    }
}
