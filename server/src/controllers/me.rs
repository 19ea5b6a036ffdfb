//! `GET /api/v1/me`: who the token belongs to.

use actix_web::{get, web};

use crate::auth::Auth;
use crate::error::{AppResult, ProblemBody};
use crate::views::Me;

/// The authenticated user: login, tier and admin flag.
#[utoipa::path(tag = "auth", security(("bearer" = [])), responses((status = 200, body = Me), (status = 401, body = ProblemBody)))]
#[get("/api/v1/me")]
pub async fn me(auth: Auth) -> AppResult<web::Json<Me>> {
    Ok(web::Json(Me {
        login: auth.user.login.clone(),
        tier: auth.user.tier,
        admin: auth.user.is_admin,
    }))
}
