//! Trusted publishers: per tool, a CI identity — OpenID Connect issuer,
//! repository, workflow file and optionally deployment environment — whose
//! ID tokens `POST /api/v1/oidc/exchange` trades for a short-lived token
//! that publishes new versions of that tool (the tokens are verified by
//! `toolreg_trustpub`). Whether one accepts a CI job is one method,
//! [`TrustedPublisher::accepts`], asked by the exchange and by every
//! publish with such a token.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use toolreg_api::{EncodableTrustedPublisher, Provenance};

use crate::db::{now, DbConnection};
use crate::encode::rfc3339;
use crate::error::{bad_request, internal, AppResult};
use crate::schema::{tools, trusted_publishers, users};

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
}

/// A CI job, as a trusted publisher is asked whether it accepts it.
#[derive(Debug, Clone, Copy)]
pub struct CiJob<'a> {
    pub issuer: &'a str,
    pub repository: &'a str,
    pub workflow: &'a str,
    pub environment: JobEnvironment<'a>,
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
        }
    }

    /// The job that a version's (or a token's) provenance records.
    pub fn of_provenance(provenance: &'a Provenance) -> CiJob<'a> {
        CiJob {
            issuer: &provenance.issuer,
            repository: &provenance.repository,
            workflow: &provenance.workflow,
            environment: JobEnvironment::NotRecorded,
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
}

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
        Ok(self)
    }
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
    /// Does this trusted publisher accept `job`? The same issuer, repository
    /// and workflow, and — when it names an environment and the job's is
    /// known — the same environment.
    pub fn accepts(&self, job: &CiJob<'_>) -> bool {
        let environment = match (&self.environment, job.environment) {
            (None, _) | (Some(_), JobEnvironment::NotRecorded) => true,
            (Some(wanted), JobEnvironment::Claimed(claimed)) => claimed == Some(wanted.as_str()),
        };
        self.issuer == job.issuer
            && self.repository == job.repository
            && self.workflow == job.workflow
            && environment
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
            .any(|t| t.accepts(&job)))
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

    /// Every trusted publisher of `issuer` and `repository`, with its tool's
    /// name, for matching an ID token's claims.
    pub fn for_repository(
        conn: &mut DbConnection,
        issuer: &str,
        repository: &str,
    ) -> AppResult<Vec<(TrustedPublisher, String)>> {
        Ok(crate::on_backend!(conn, |c| trusted_publishers::table
            .inner_join(tools::table)
            .filter(trusted_publishers::issuer.eq(issuer))
            .filter(trusted_publishers::repository.eq(repository))
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
            workflow: self.workflow.clone(),
            environment: self.environment.clone(),
            created_by: login,
            created_at: rfc3339(&self.created_at),
        })
    }
}
