//! `GET /api/v1/search`: validated parameters in, one page of hits with
//! highlights, the total and facet counts out (docs/api.md, "Search").
//! Bad parameters are 400 problem+json naming the parameter; before the
//! index is open the answer is 503 with `Retry-After`.

use actix_web::{get, web};
use toolreg_search::SearchRequest;

use crate::app::AppState;
use crate::error::{AppError, AppResult, ProblemBody};
use crate::views::SearchAnswer;

/// Search tools by name, title, keywords and description, with filters,
/// sorting, paging, facet counts and highlights.
#[utoipa::path(tag = "search",
    params(
        ("q" = Option<String>, Query, description = "Free text of any length: a name or a few words (words of 5+ letters forgive one typo, name words match by prefix), or a need in a sentence (more than four words: stopwords and bare numbers are left out; at most 4,096 characters and the 32 rarest words are read). The answer's `words` lists the words used"),
        ("keyword" = Option<String>, Query, description = "Only tools with this keyword"),
        ("license" = Option<String>, Query, description = "Only tools with this license (case-insensitive)"),
        ("format" = Option<String>, Query, description = "matimo, shinkai, mcp, prompt or skill"),
        ("execution" = Option<String>, Query, description = "function, script, command, http, prompt or schema"),
        ("tier" = Option<String>, Query, description = "untrusted, verified or trusted (the publisher's tier)"),
        ("findings" = Option<String>, Query, description = "none (the listed version carries no lint findings) or flagged (it carries at least one)"),
        ("provenance" = Option<String>, Query, description = "true (the listed version came from trusted publishing, with CI provenance) or false"),
        ("deprecated" = Option<String>, Query, description = "true (the listed version is deprecated by its owners) or false; deprecated tools rank below equal matches either way"),
        ("sort" = Option<String>, Query, description = "relevance (default), downloads, recent or name"),
        ("page" = Option<u64>, Query, description = "1-based page (page × per_page at most 10000)"),
        ("per_page" = Option<u64>, Query, description = "1 to 100, default 20"),
    ),
    responses((status = 200, description = "One page of results", body = Object), (status = 400, body = ProblemBody),
        (status = 503, description = "Search is not running yet (see Retry-After)", body = ProblemBody)))]
#[get("/api/v1/search")]
pub async fn search(
    state: web::Data<AppState>,
    query: web::Query<SearchRequest>,
) -> AppResult<web::Json<SearchAnswer>> {
    let params = query.parse()?;
    let results = web::block(move || state.search.query(&params))
        .await
        .map_err(|e| AppError::Internal(format!("search task failed: {e}")))??;
    Ok(web::Json(results))
}
