//! The listing fields of a version's manifest, stored on the version's row.

/// The listing fields of a version's manifest, stored with the version
/// (`versions.summary`) so a tool's summary and its search document don't
/// read and parse the whole manifest. Read leniently: a row that doesn't
/// parse gives empty fields rather than an error, so one odd row can't break
/// a listing or the index.
#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct ManifestSummary {
    pub call_name: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub keywords: Vec<String>,
    pub license: Option<String>,
    pub homepage: Option<String>,
    pub repository: Option<String>,
}

impl ManifestSummary {
    /// The summary of a canonical tool, as publish stores it.
    pub fn of(tool: &toolreg_core::Tool) -> ManifestSummary {
        ManifestSummary {
            call_name: Some(tool.call_name.clone()),
            title: tool.title.clone(),
            description: Some(tool.description.clone()),
            keywords: tool.keywords.clone(),
            license: tool.license.clone(),
            homepage: tool.homepage.clone(),
            repository: tool.repository.clone(),
        }
    }

    /// Read a stored summary (or any JSON object with these fields, such as
    /// a whole manifest); what doesn't parse gives the empty summary.
    pub fn parse(json: &str) -> ManifestSummary {
        serde_json::from_str(json).unwrap_or_default()
    }

    /// The JSON stored in `versions.summary`.
    pub fn to_json(&self) -> String {
        // A struct of strings and a list of strings always serializes.
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }
}
