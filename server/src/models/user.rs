//! Users (publishers): login, tier, admin flag.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use toolreg_api::EncodablePublisher;
use toolreg_core::Tier;

use crate::db::{now, DbConnection};
use crate::error::{bad_request, internal, not_found, AppResult};
use crate::models::stored::Stored;
use crate::schema::users;

#[derive(Debug, Clone, Queryable, Selectable, Identifiable)]
#[diesel(table_name = users)]
pub struct User {
    pub id: i64,
    pub login: String,
    #[diesel(deserialize_as = Stored<Tier>)]
    pub tier: Tier,
    pub is_admin: bool,
    pub created_at: NaiveDateTime,
}

impl User {
    pub fn find(conn: &mut DbConnection, id: i64) -> AppResult<User> {
        Ok(crate::on_backend!(conn, |c| users::table
            .find(id)
            .select(User::as_select())
            .first(c))?)
    }

    pub fn by_login(conn: &mut DbConnection, login: &str) -> AppResult<Option<User>> {
        Ok(users::table
            .filter(users::login.eq(login))
            .select(User::as_select())
            .first(conn)
            .optional()?)
    }

    /// The user with `login`, or 404 naming it.
    pub fn require_by_login(conn: &mut DbConnection, login: &str) -> AppResult<User> {
        User::by_login(conn, login)?.ok_or_else(|| not_found(format!("there is no user `{login}`")))
    }

    /// Insert a user (call inside a write transaction). A taken login is 400.
    pub fn create(
        conn: &mut DbConnection,
        login: &str,
        tier: Tier,
        is_admin: bool,
    ) -> AppResult<User> {
        validate_login(login)?;
        if User::by_login(conn, login)?.is_some() {
            return Err(bad_request(format!("the login `{login}` is taken")));
        }
        diesel::insert_into(users::table)
            .values((
                users::login.eq(login),
                users::tier.eq(tier.as_str()),
                users::is_admin.eq(is_admin),
                users::created_at.eq(now()),
            ))
            .execute(conn)?;
        User::by_login(conn, login)?.ok_or_else(|| internal("the new user vanished"))
    }

    pub fn set_tier(conn: &mut DbConnection, id: i64, tier: Tier) -> AppResult<()> {
        diesel::update(users::table.find(id))
            .set(users::tier.eq(tier.as_str()))
            .execute(conn)?;
        Ok(())
    }
}

impl From<&User> for EncodablePublisher {
    /// A user as an owner or publisher, with their tier as it is now.
    fn from(user: &User) -> Self {
        EncodablePublisher {
            login: user.login.clone(),
            tier: user.tier,
        }
    }
}

/// Logins: 1–39 characters of ASCII letters, digits, `-` and `_`, starting with a letter or digit.
pub fn validate_login(login: &str) -> AppResult<()> {
    let ok = !login.is_empty()
        && login.len() <= 39
        && login
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && login.as_bytes()[0].is_ascii_alphanumeric();
    if ok {
        Ok(())
    } else {
        Err(bad_request(format!(
            "the login `{login}` is not valid: use 1-39 ASCII letters, digits, `-` or `_`, starting with a letter or digit"
        )))
    }
}
