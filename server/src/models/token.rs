//! API tokens: random `trg_` secrets shown once, stored as their SHA-256,
//! with optional scopes, expiry and the agent flag.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use rand::distr::{Alphanumeric, SampleString};
use subtle::ConstantTimeEq;
use toolreg_api::EncodableToken;

use crate::db::{now, DbConnection};
use crate::encode::rfc3339;
use crate::error::{bad_request, internal, AppResult};
use crate::models::user::User;
use crate::schema::{token_tools, tokens, users};

/// What a token may do. `publish` is shorthand for both publish scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// Publish the first version of a new tool.
    PublishNew,
    /// Publish a new version of a tool the user owns.
    PublishUpdate,
    /// Yank and unyank versions.
    Yank,
    /// Add and remove owners.
    Owners,
    /// Create, list and revoke tokens.
    Tokens,
    /// Administration: change publisher tiers, read the audit log. Never in
    /// the default set; agent tokens never hold it.
    Admin,
}

impl Scope {
    /// Every scope, `admin` included.
    pub const ALL: [Scope; 6] = [
        Scope::PublishNew,
        Scope::PublishUpdate,
        Scope::Yank,
        Scope::Owners,
        Scope::Tokens,
        Scope::Admin,
    ];

    /// The scopes a token gets when none are asked for: every one but `admin`.
    pub const DEFAULT: [Scope; 5] = [
        Scope::PublishNew,
        Scope::PublishUpdate,
        Scope::Yank,
        Scope::Owners,
        Scope::Tokens,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::PublishNew => "publish-new",
            Scope::PublishUpdate => "publish-update",
            Scope::Yank => "yank",
            Scope::Owners => "owners",
            Scope::Tokens => "tokens",
            Scope::Admin => "admin",
        }
    }

    /// Parse a list of scope names (`publish` expands to both publish scopes),
    /// deduplicated and sorted. Unknown names are a 400 naming them.
    pub fn parse_list(names: &[String]) -> AppResult<Vec<Scope>> {
        let mut out = Vec::new();
        for name in names {
            match name.as_str() {
                "publish" => out.extend([Scope::PublishNew, Scope::PublishUpdate]),
                other => match Scope::ALL.into_iter().find(|s| s.as_str() == other) {
                    Some(s) => out.push(s),
                    None => {
                        return Err(bad_request(format!(
                            "scopes: unknown scope `{other}` (expected publish, publish-new, publish-update, yank, owners, tokens or admin)"
                        )))
                    }
                },
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    fn join(scopes: &[Scope]) -> String {
        scopes
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Identifiable)]
#[diesel(table_name = tokens)]
pub struct Token {
    pub id: i64,
    pub user_id: i64,
    pub name: String,
    pub token_hash: String,
    pub scopes: String,
    pub agent: bool,
    pub expires_at: Option<NaiveDateTime>,
    pub created_at: NaiveDateTime,
    pub last_used_at: Option<NaiveDateTime>,
    pub revoked_at: Option<NaiveDateTime>,
    /// The token that created this one (`None` for the operator's tokens).
    pub parent_id: Option<i64>,
    /// For a token from trusted publishing (`POST /api/v1/oidc/exchange`):
    /// the CI run it was issued to, as `toolreg_api::Provenance` JSON. Such
    /// a token publishes new versions of its [`Token::tools`] only.
    pub provenance: Option<String>,
    /// For such a token: the deployment environment its ID token claimed
    /// (`None`: none), which publish checks against the trusted publishers.
    pub oidc_environment: Option<String>,
}

/// How many tokens above a token [`Token::find_live`] checks; a deeper
/// chain is refused (no API path builds one that deep in practice).
const MAX_PARENT_DEPTH: usize = 64;

/// What a token from trusted publishing carries of the CI run it was issued to.
pub struct ExchangedRun<'a> {
    /// The run, as `toolreg_api::Provenance` JSON.
    pub provenance: &'a str,
    /// The tools it may publish.
    pub tool_ids: &'a [i64],
    /// Whether it is an agent token (its trusted publisher was set up by one).
    pub agent: bool,
    /// The deployment environment the run's ID token claimed.
    pub environment: Option<&'a str>,
}

/// A token as created: the row and the secret, which is never stored.
pub struct IssuedToken {
    pub token: Token,
    pub secret: String,
}

/// SHA-256 of a token secret, as stored.
pub fn hash_secret(secret: &str) -> String {
    toolreg_core::digest::sha256_hex(secret.as_bytes())
}

impl Token {
    pub fn scopes(&self) -> Vec<Scope> {
        let names: Vec<String> = self
            .scopes
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        Scope::parse_list(&names).unwrap_or_default()
    }

    /// The names of the token's scopes, as the API shows them.
    pub fn scope_names(&self) -> Vec<String> {
        self.scopes()
            .into_iter()
            .map(|s| s.as_str().to_string())
            .collect()
    }

    pub fn has_scope(&self, scope: Scope) -> bool {
        self.scopes().contains(&scope)
    }

    /// Create a token for `user_id` (call inside a write transaction).
    pub fn create(
        conn: &mut DbConnection,
        user_id: i64,
        name: &str,
        scopes: &[Scope],
        agent: bool,
        expires_at: Option<NaiveDateTime>,
    ) -> AppResult<IssuedToken> {
        Token::insert(conn, user_id, None, name, scopes, agent, expires_at)
    }

    /// Create a token made by the token `parent` (call inside a write
    /// transaction). The child never outlives its parent: its expiry is
    /// clamped to the parent's, and revoking the parent revokes it.
    pub fn create_child(
        conn: &mut DbConnection,
        parent: &Token,
        name: &str,
        scopes: &[Scope],
        agent: bool,
        expires_at: Option<NaiveDateTime>,
    ) -> AppResult<IssuedToken> {
        let expires_at = match (expires_at, parent.expires_at) {
            (Some(child), Some(parent)) => Some(child.min(parent)),
            (None, parent) => parent,
            (child, None) => child,
        };
        Token::insert(
            conn,
            parent.user_id,
            Some(parent.id),
            name,
            scopes,
            agent,
            expires_at,
        )
    }

    /// Create the token trusted publishing issues (call inside a write
    /// transaction): owned by `user_id`, scope `publish-update` only, valid
    /// until `expires_at`, carrying the run's provenance and limited to its
    /// tools ([`ExchangedRun`]).
    pub fn create_exchanged(
        conn: &mut DbConnection,
        user_id: i64,
        name: &str,
        expires_at: NaiveDateTime,
        run: ExchangedRun<'_>,
    ) -> AppResult<IssuedToken> {
        let ExchangedRun {
            provenance,
            tool_ids,
            agent,
            environment,
        } = run;
        let mut issued = Token::insert(
            conn,
            user_id,
            None,
            name,
            &[Scope::PublishUpdate],
            agent,
            Some(expires_at),
        )?;
        diesel::update(tokens::table.find(issued.token.id))
            .set((
                tokens::provenance.eq(provenance),
                tokens::oidc_environment.eq(environment),
            ))
            .execute(conn)?;
        for tool_id in tool_ids {
            diesel::insert_into(token_tools::table)
                .values((
                    token_tools::token_id.eq(issued.token.id),
                    token_tools::tool_id.eq(tool_id),
                ))
                .execute(conn)?;
        }
        issued.token.provenance = Some(provenance.to_string());
        issued.token.oidc_environment = environment.map(str::to_string);
        Ok(issued)
    }

    /// The tools a trusted-publishing token may publish (empty for every
    /// other token, which the tools' owner lists limit instead).
    pub fn tools(&self, conn: &mut DbConnection) -> AppResult<Vec<i64>> {
        if self.provenance.is_none() {
            return Ok(Vec::new());
        }
        Ok(token_tools::table
            .filter(token_tools::token_id.eq(self.id))
            .select(token_tools::tool_id)
            .load(conn)?)
    }

    fn insert(
        conn: &mut DbConnection,
        user_id: i64,
        parent_id: Option<i64>,
        name: &str,
        scopes: &[Scope],
        agent: bool,
        expires_at: Option<NaiveDateTime>,
    ) -> AppResult<IssuedToken> {
        let name = name.trim();
        if name.is_empty() || name.len() > 100 {
            return Err(bad_request(
                "name: a token needs a name of 1-100 characters",
            ));
        }
        if scopes.is_empty() {
            return Err(bad_request(
                "scopes: a token needs at least one scope (or leave `scopes` out for all)",
            ));
        }
        let secret = format!("trg_{}", Alphanumeric.sample_string(&mut rand::rng(), 40));
        let hash = hash_secret(&secret);
        diesel::insert_into(tokens::table)
            .values((
                tokens::user_id.eq(user_id),
                tokens::name.eq(name),
                tokens::token_hash.eq(&hash),
                tokens::scopes.eq(Scope::join(scopes)),
                tokens::agent.eq(agent),
                tokens::expires_at.eq(expires_at),
                tokens::created_at.eq(now()),
                tokens::parent_id.eq(parent_id),
            ))
            .execute(conn)?;
        let token = tokens::table
            .filter(tokens::token_hash.eq(&hash))
            .select(Token::as_select())
            .first(conn)
            .optional()?
            .ok_or_else(|| internal("the new token vanished"))?;
        Ok(IssuedToken { token, secret })
    }

    /// The live (not revoked, not expired) token whose secret is `secret`,
    /// with its user, read in one query. The lookup is by hash; the stored
    /// hash is then compared in constant time.
    pub fn find_live(conn: &mut DbConnection, secret: &str) -> AppResult<Option<(Token, User)>> {
        let hash = hash_secret(secret);
        let found: Option<(Token, User)> = crate::on_backend!(conn, |c| tokens::table
            .inner_join(users::table)
            .filter(tokens::token_hash.eq(&hash))
            .select((Token::as_select(), User::as_select()))
            .first(c)
            .optional())?;
        let Some(found) = found.filter(|(t, _)| {
            bool::from(t.token_hash.as_bytes().ct_eq(hash.as_bytes())) && t.is_live()
        }) else {
            return Ok(None);
        };
        // A child is only as good as the tokens above it. Revocation cascades
        // and expiry is clamped at creation, so this only matters for rows
        // changed behind the API's back; each step is one primary-key lookup.
        let mut parent_id = found.0.parent_id;
        for _ in 0..MAX_PARENT_DEPTH {
            let Some(id) = parent_id else {
                return Ok(Some(found));
            };
            let parent: Option<Token> = tokens::table
                .find(id)
                .select(Token::as_select())
                .first(conn)
                .optional()?;
            match parent {
                Some(p) if p.is_live() => parent_id = p.parent_id,
                _ => return Ok(None),
            }
        }
        Ok(None)
    }

    /// Not revoked and not expired.
    fn is_live(&self) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|e| e > now())
    }

    /// The user's tokens that are not revoked, newest first.
    pub fn list_for_user(conn: &mut DbConnection, user_id: i64) -> AppResult<Vec<Token>> {
        Ok(tokens::table
            .filter(tokens::user_id.eq(user_id))
            .filter(tokens::revoked_at.is_null())
            .order(tokens::id.desc())
            .select(Token::as_select())
            .load(conn)?)
    }

    pub fn find_for_user(
        conn: &mut DbConnection,
        user_id: i64,
        id: i64,
    ) -> AppResult<Option<Token>> {
        Ok(tokens::table
            .filter(tokens::id.eq(id))
            .filter(tokens::user_id.eq(user_id))
            .filter(tokens::revoked_at.is_null())
            .select(Token::as_select())
            .first(conn)
            .optional()?)
    }

    /// Revoke the token `id` and every live token below it (its children,
    /// their children, ...); returns the ids revoked, `id` first.
    pub fn revoke(conn: &mut DbConnection, id: i64) -> AppResult<Vec<i64>> {
        let at = now();
        let mut revoked = vec![id];
        let mut level = vec![id];
        while !level.is_empty() {
            diesel::update(tokens::table.filter(tokens::id.eq_any(level.clone())))
                .filter(tokens::revoked_at.is_null())
                .set(tokens::revoked_at.eq(Some(at)))
                .execute(conn)?;
            level = tokens::table
                .filter(tokens::parent_id.eq_any(level.clone()))
                .filter(tokens::revoked_at.is_null())
                .select(tokens::id)
                .load(conn)?;
            revoked.extend(&level);
        }
        Ok(revoked)
    }

    pub fn touch(conn: &mut DbConnection, id: i64) -> AppResult<()> {
        diesel::update(tokens::table.find(id))
            .set(tokens::last_used_at.eq(Some(now())))
            .execute(conn)?;
        Ok(())
    }
}

impl From<&Token> for EncodableToken {
    /// A token as listed: never with its secret.
    fn from(t: &Token) -> Self {
        EncodableToken {
            id: t.id,
            name: t.name.clone(),
            scopes: t.scope_names(),
            agent: t.agent,
            expires_at: t.expires_at.as_ref().map(rfc3339),
            created_at: rfc3339(&t.created_at),
            last_used_at: t.last_used_at.as_ref().map(rfc3339),
        }
    }
}

impl From<&IssuedToken> for toolreg_api::CreatedToken {
    /// The answer to creating a token: the only time its secret is shown.
    fn from(created: &IssuedToken) -> Self {
        let listed = EncodableToken::from(&created.token);
        toolreg_api::CreatedToken {
            id: listed.id,
            name: listed.name,
            token: created.secret.clone(),
            scopes: listed.scopes,
            agent: listed.agent,
            expires_at: listed.expires_at,
            created_at: listed.created_at,
        }
    }
}
