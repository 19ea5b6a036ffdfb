//! The web index: server-rendered HTML pages for people (search at `/`, tool
//! pages at `/tools/{name}[/{version}]`, version diffs at
//! `/tools/{name}/diff/{A}...{B}`) and their embedded assets at
//! `/static/`. Pages work without JavaScript; `static/app.js` only adds
//! search-as-you-type and copy buttons. Every page is sent with a strict
//! Content-Security-Policy, so templates carry no inline script or style.
//!
//! * [`catalog`]: what the pages read ([`Catalog`]), in the API's types.
//! * [`store_catalog`]: [`Catalog`] over the server's store and search index.
//! * [`query`]: the search form's query string, read by the search crate's parser.
//! * [`pages`]: askama templates and view models; [`html`]: the sanitizers;
//!   [`params`]: a tool's parameters as table rows.
//! * [`handlers`]: the actix handlers; [`assets`]: hashed, immutable assets.

pub mod assets;
pub mod catalog;
pub mod handlers;
pub mod html;
pub mod pages;
pub mod params;
pub mod query;
pub mod store_catalog;
#[cfg(test)]
mod tests;

pub use catalog::Catalog;

use actix_web::web;

use crate::app::AppState;

/// Register the web index's routes, reading the server's [`AppState`] (its
/// store, search index and policy) as the catalog.
pub fn configure(cfg: &mut web::ServiceConfig) {
    configure_with::<AppState>(cfg);
}

/// Register the web index's routes for a catalog of type `C`, read from
/// `web::Data<C>` in the app data.
pub fn configure_with<C: Catalog>(cfg: &mut web::ServiceConfig) {
    cfg.route("/", web::get().to(handlers::home::<C>))
        .route("/static/{file}", web::get().to(assets::serve))
        .service(
            web::scope("/tools")
                .route("/{name}", web::get().to(handlers::tool::<C>))
                .route("/{name}/", web::get().to(handlers::tool::<C>))
                .route(
                    "/{name}/diff/{range}",
                    web::get().to(handlers::tool_diff::<C>),
                )
                .route(
                    "/{name}/{version}",
                    web::get().to(handlers::tool_version::<C>),
                )
                .default_service(web::to(handlers::tools_not_found)),
        );
}
