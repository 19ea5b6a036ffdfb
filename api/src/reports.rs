//! Reports of versions and their quarantine: what a user sends, what the
//! administrators list, and what quarantining a version answers.

use serde::{Deserialize, Serialize};

/// Body of `POST /api/v1/tools/{name}/{version}/reports` and of
/// `PUT /api/v1/tools/{name}/{version}/quarantine`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReasonRequest {
    /// Why, in 1 to 2000 characters.
    #[serde(default)]
    pub reason: Option<String>,
}

/// A user's report of a version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EncodableReport {
    pub id: i64,
    pub name: String,
    pub version: String,
    /// Login of the user who reported it.
    pub reporter: String,
    pub reason: String,
    /// `open`, or `closed` once the version was quarantined.
    pub status: String,
    pub created_at: String,
}

/// `GET /api/v1/reports`: open reports, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReportPage {
    /// Open reports in all.
    pub total: i64,
    pub page: i64,
    pub per_page: i64,
    pub reports: Vec<EncodableReport>,
}

/// Answer to quarantining a version or lifting its quarantine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QuarantineState {
    pub name: String,
    pub version: String,
    pub quarantined: bool,
    pub quarantine_reason: Option<String>,
    /// RFC 3339; null when not quarantined.
    pub quarantined_at: Option<String>,
}
