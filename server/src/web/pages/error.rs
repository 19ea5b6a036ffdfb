//! The error pages: 400, 404 and 500 as HTML.

use askama::Template;

use crate::web::assets::{Assets, ASSETS};

/// 400, 404 and 500 pages.
#[derive(Template)]
#[template(path = "web/error.html")]
pub struct ErrorPage {
    pub assets: &'static Assets,
    pub status: u16,
    pub heading: String,
    pub message: String,
}

impl ErrorPage {
    pub fn new(status: u16, heading: impl Into<String>, message: impl Into<String>) -> Self {
        ErrorPage {
            assets: &ASSETS,
            status,
            heading: heading.into(),
            message: message.into(),
        }
    }
}
