//! A version's state, and every answer that follows from it.
//!
//! Whether a version's contents may be served, whether its texts are shown,
//! whether it is listed in search and the web index, whether resolving may
//! choose it, and the problem a refusal answers with: each is one method of
//! [`VersionState`], and every surface asks here — the version JSON, the
//! download and the blob by digest, the definition export in every format,
//! the diff API and page, the tool and version pages, resolve, the tool
//! summary and the search source. None of them reads the `yanked`,
//! `blocked` or `quarantined` columns to decide for itself; those columns
//! are only reported as they are (the version JSON's flags).
//!
//! | state | contents | texts | listed | resolvable |
//! |---|---|---|---|---|
//! | live | served | shown | yes | yes |
//! | yanked | served: existing pins keep working | shown | no | no |
//! | blocked | 403 `blocked` | shown | as blocked, unless also yanked | no: 403 |
//! | quarantined | 403 `quarantined` | withheld (the page is a 403 notice) | no | no: 403 |
//!
//! *Contents* are the bundle, the definition in any format, the canonical
//! manifest, the diff against another version, the exports and code on the
//! version's page, and the finding excerpts that quote the definition.
//! *Texts* are the README, the listing fields (title, description,
//! keywords, …) of a tool shown under the version, and the version's page.
//!
//! A version may be yanked and also blocked or quarantined: the stronger
//! state wins and carries the yank, which only changes whether it is listed
//! and whether resolve names it. A quarantine is stronger than a block (it
//! withholds everything a block does, and more), so a quarantined version
//! that is also blocked answers as quarantined.
//!
//! Adding a state is one variant here: every method matches on every
//! variant, so the compiler asks for each of its answers.
//!
//! # Deprecation: advice beside the state
//!
//! An owner's deprecation (`crate::models::deprecation`) is not a state: a
//! deprecated version is served, listed and resolved exactly as its state
//! says, and it may be yanked, blocked or quarantined as well. It is the
//! second answer of [`HasState`], [`HasState::deprecation`], read from the
//! row's `deprecation` column (or the answer's `deprecated` field) the same
//! way by every surface: the version and tool JSON, search, the web pages.

use toolreg_api::{EncodableDeprecation, EncodableVersion, EncodableVersionSummary};
use toolreg_core::lint::Finding;

use crate::error::AppError;

/// A row or an answer that carries a version's state columns (`yanked`,
/// `blocked`, `blocked_reason`, `quarantined`, `quarantine_reason`) and its
/// deprecation: the version rows, the API's version answers (which the web
/// pages read) and the search source's row all read them the same way.
pub trait HasState {
    /// The version's state, which every surface asks what to serve.
    fn state(&self) -> VersionState;
    /// The owners' deprecation of the version, if any: advice shown
    /// wherever a user chooses a version, never a refusal.
    fn deprecation(&self) -> Option<EncodableDeprecation>;
}

/// Implement [`HasState`] for types with the five state fields and a
/// deprecation: `rows:` for rows with the stored `deprecation` column (JSON,
/// read by [`deprecation_of`]), `answers:` for API answers with their
/// `deprecated` field.
macro_rules! has_state {
    (@state) => {
        fn state(&self) -> $crate::models::version::VersionState {
            $crate::models::version::VersionState::from_columns(
                self.yanked,
                self.blocked,
                self.blocked_reason.as_deref(),
                self.quarantined,
                self.quarantine_reason.as_deref(),
            )
        }
    };
    (rows: $($t:ty),+ $(,)?) => {$(
        impl $crate::models::version::state::HasState for $t {
            $crate::models::version::state::has_state!(@state);
            fn deprecation(&self) -> Option<toolreg_api::EncodableDeprecation> {
                $crate::models::version::state::deprecation_of(self.deprecation.as_deref())
            }
        }
    )+};
    (answers: $($t:ty),+ $(,)?) => {$(
        impl $crate::models::version::state::HasState for $t {
            $crate::models::version::state::has_state!(@state);
            fn deprecation(&self) -> Option<toolreg_api::EncodableDeprecation> {
                self.deprecated.clone()
            }
        }
    )+};
}
pub(crate) use has_state;

has_state!(answers: EncodableVersion, EncodableVersionSummary);

/// The deprecation stored in a version row's `deprecation` column (JSON),
/// read leniently: a value that does not parse reads as not deprecated
/// rather than breaking a listing, a summary or the index.
pub fn deprecation_of(stored: Option<&str>) -> Option<EncodableDeprecation> {
    stored.and_then(|json| serde_json::from_str(json).ok())
}

/// What a version is now, as far as serving, listing and resolving it go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionState {
    /// Served, listed and resolvable.
    Live,
    /// Withdrawn by an owner: still served, so existing pins keep working,
    /// but never listed or resolved.
    Yanked,
    /// The tier policy refuses its execution kind for its publisher's
    /// current tier (`crate::models::tier`): its contents are withheld.
    Blocked {
        /// Why, as the policy said (`None` for a row blocked without one).
        reason: Option<String>,
        yanked: bool,
    },
    /// An administrator withholds it until the quarantine is lifted
    /// (`crate::models::quarantine`).
    Quarantined { reason: String, yanked: bool },
}

impl VersionState {
    /// The state a version row's columns describe.
    pub fn from_columns(
        yanked: bool,
        blocked: bool,
        blocked_reason: Option<&str>,
        quarantined: bool,
        quarantine_reason: Option<&str>,
    ) -> VersionState {
        if quarantined {
            VersionState::Quarantined {
                reason: quarantine_reason.unwrap_or_default().to_string(),
                yanked,
            }
        } else if blocked {
            VersionState::Blocked {
                reason: blocked_reason.map(str::to_string),
                yanked,
            }
        } else if yanked {
            VersionState::Yanked
        } else {
            VersionState::Live
        }
    }

    /// May `version`'s contents be served? The refusal is the problem the
    /// request answers with: 403 `quarantined` or `blocked`, naming the
    /// version and the reason.
    pub fn contents(&self, version: &str) -> Result<(), AppError> {
        match self {
            VersionState::Live | VersionState::Yanked => Ok(()),
            VersionState::Blocked { reason, .. } => Err(AppError::Blocked(blocked_message(
                version,
                reason.as_deref(),
            ))),
            VersionState::Quarantined { reason, .. } => {
                Err(AppError::Quarantined(quarantined_message(version, reason)))
            }
        }
    }

    /// True if the contents are served ([`VersionState::contents`] is `Ok`).
    pub fn contents_served(&self) -> bool {
        match self {
            VersionState::Live | VersionState::Yanked => true,
            VersionState::Blocked { .. } | VersionState::Quarantined { .. } => false,
        }
    }

    /// `findings` as they may be shown: with the contents withheld, each
    /// finding's excerpt (which quotes the definition) is withheld too, and
    /// its message becomes the rule's meaning (a message may quote the
    /// definition as well: the text hidden in tag characters, a parameter's
    /// name); the rule, severity and pointer are left.
    pub fn findings(&self, mut findings: Vec<Finding>) -> Vec<Finding> {
        if !self.contents_served() {
            for f in &mut findings {
                f.excerpt.clear();
                f.message = f.rule.meaning().to_string();
            }
        }
        findings
    }

    /// Are the version's texts shown: its README, the listing fields of a
    /// tool shown under it, and its page? The refusal is the problem the page
    /// answers with instead (403 `quarantined`, naming the version and the
    /// reason).
    pub fn texts(&self, version: &str) -> Result<(), AppError> {
        match self {
            VersionState::Live | VersionState::Yanked | VersionState::Blocked { .. } => Ok(()),
            VersionState::Quarantined { reason, .. } => {
                Err(AppError::Quarantined(quarantined_message(version, reason)))
            }
        }
    }

    /// True if the texts are shown ([`VersionState::texts`] is `Ok`).
    pub fn texts_shown(&self) -> bool {
        match self {
            VersionState::Live | VersionState::Yanked | VersionState::Blocked { .. } => true,
            VersionState::Quarantined { .. } => false,
        }
    }

    /// How strongly a tool prefers to be listed under this version: the
    /// version a tool is listed under is its newest version of the highest
    /// rank (`crate::models::tool_summary`). Live versions first, then
    /// blocked ones (shown as blocked); a version of rank 0 is not listed.
    pub fn listing_rank(&self) -> u8 {
        match self {
            VersionState::Live => 2,
            VersionState::Blocked { yanked: false, .. } => 1,
            VersionState::Yanked
            | VersionState::Blocked { yanked: true, .. }
            | VersionState::Quarantined { .. } => 0,
        }
    }

    /// Is a tool listed under this version shown in search and the web
    /// index?
    pub fn listed(&self) -> bool {
        self.listing_rank() > 0
    }

    /// Is a skill listed under this version offered to skill clients (the
    /// Agent Skills discovery index and `SKILL.md`)? Only a live one: the
    /// index offers what a client may install now, and a client pins
    /// nothing, so a yanked version is not offered either.
    pub fn discoverable(&self) -> bool {
        match self {
            VersionState::Live => true,
            VersionState::Yanked
            | VersionState::Blocked { .. }
            | VersionState::Quarantined { .. } => false,
        }
    }

    /// How resolve treats this version when it matches the requirement:
    /// the matching version of the highest rank decides the answer.
    pub fn resolve_rank(&self) -> u8 {
        match self {
            VersionState::Live => 3,
            VersionState::Quarantined { yanked: false, .. } => 2,
            VersionState::Blocked { yanked: false, .. } => 1,
            VersionState::Yanked
            | VersionState::Blocked { yanked: true, .. }
            | VersionState::Quarantined { yanked: true, .. } => 0,
        }
    }

    /// What resolve answers when this is the matching version of the highest
    /// [`VersionState::resolve_rank`]: `Some(Ok)` to resolve to it,
    /// `Some(Err)` with the problem that names the tool, the version and why
    /// it can't be used, `None` when it is skipped silently (a yanked
    /// version: the answer is 404).
    pub fn resolve(&self, tool: &str, version: &str) -> Option<Result<(), AppError>> {
        match self {
            VersionState::Live => Some(Ok(())),
            VersionState::Blocked { yanked: false, .. }
            | VersionState::Quarantined { yanked: false, .. } => {
                Some(self.contents(version).map_err(|e| match e {
                    AppError::Blocked(m) => AppError::Blocked(format!("{tool}: {m}")),
                    AppError::Quarantined(m) => AppError::Quarantined(format!("{tool}: {m}")),
                    other => other,
                }))
            }
            VersionState::Yanked
            | VersionState::Blocked { yanked: true, .. }
            | VersionState::Quarantined { yanked: true, .. } => None,
        }
    }

    /// The length of the reason the state carries (for sizing cache entries).
    pub fn reason_len(&self) -> usize {
        match self {
            VersionState::Live | VersionState::Yanked => 0,
            VersionState::Blocked { reason, .. } => reason.as_ref().map_or(0, String::len),
            VersionState::Quarantined { reason, .. } => reason.len(),
        }
    }

    /// The words that mark the version in a list of versions (`yanked`,
    /// `blocked`, `quarantined`), empty for a live one.
    pub fn labels(&self) -> &'static [&'static str] {
        match self {
            VersionState::Live => &[],
            VersionState::Yanked => &["yanked"],
            VersionState::Blocked { yanked: false, .. } => &["blocked"],
            VersionState::Blocked { yanked: true, .. } => &["yanked", "blocked"],
            VersionState::Quarantined { yanked: false, .. } => &["quarantined"],
            VersionState::Quarantined { yanked: true, .. } => &["yanked", "quarantined"],
        }
    }
}

/// The explanation a quarantined version answers with.
fn quarantined_message(version: &str, reason: &str) -> String {
    format!(
        "version {version} is quarantined by the registry's administrators: {reason} \
         (its bundle and definition are withheld until the quarantine is lifted)"
    )
}

/// The explanation a blocked version answers with.
fn blocked_message(version: &str, reason: Option<&str>) -> String {
    match reason {
        Some(reason) => format!("version {version} is blocked: {reason}"),
        None => format!("version {version} is blocked"),
    }
}

#[cfg(test)]
mod tests {
    use super::VersionState;

    fn every_state() -> Vec<VersionState> {
        let mut all = vec![VersionState::Live, VersionState::Yanked];
        for yanked in [false, true] {
            all.push(VersionState::Blocked {
                reason: Some("a `command` tool needs `verified`".into()),
                yanked,
            });
            all.push(VersionState::Quarantined {
                reason: "steals keys".into(),
                yanked,
            });
        }
        all
    }

    #[test]
    fn columns_read_with_quarantine_over_block_and_the_yank_kept() {
        let state = |y, b, q| VersionState::from_columns(y, b, Some("r"), q, Some("why"));
        assert_eq!(state(false, false, false), VersionState::Live);
        assert_eq!(state(true, false, false), VersionState::Yanked);
        assert_eq!(
            state(true, true, false),
            VersionState::Blocked {
                reason: Some("r".into()),
                yanked: true
            }
        );
        assert_eq!(
            state(false, true, true),
            VersionState::Quarantined {
                reason: "why".into(),
                yanked: false
            }
        );
    }

    #[test]
    fn the_bool_answers_agree_with_the_refusals() {
        for s in every_state() {
            assert_eq!(s.contents_served(), s.contents("1.0.0").is_ok(), "{s:?}");
            assert_eq!(s.texts_shown(), s.texts("1.0.0").is_ok(), "{s:?}");
            // Withheld texts imply withheld contents.
            assert!(s.texts_shown() || !s.contents_served(), "{s:?}");
            // Only a live version resolves, and it is listed first.
            assert_eq!(s.resolve_rank() == 3, s == VersionState::Live, "{s:?}");
            assert_eq!(s.listing_rank() == 2, s == VersionState::Live, "{s:?}");
            assert_eq!(s.discoverable(), s == VersionState::Live, "{s:?}");
            assert_eq!(
                s.resolve("calc", "1.0.0").is_some_and(|r| r.is_ok()),
                s == VersionState::Live
            );
        }
    }

    #[test]
    fn a_stored_deprecation_reads_leniently() {
        let d = super::deprecation_of(Some(r#"{"message":"old","successor":"b","req":"<2"}"#))
            .expect("parses");
        assert_eq!(
            (d.message.as_str(), d.successor.as_deref()),
            ("old", Some("b"))
        );
        assert_eq!(super::deprecation_of(None), None);
        assert_eq!(super::deprecation_of(Some("not json")), None);
    }

    #[test]
    fn refusals_name_the_version_and_the_reason() {
        let blocked = VersionState::Blocked {
            reason: Some("tier too low".into()),
            yanked: false,
        };
        let text = blocked.contents("1.2.0").unwrap_err().to_string();
        assert!(
            text.contains("1.2.0") && text.contains("tier too low"),
            "{text}"
        );
        assert!(blocked.texts("1.2.0").is_ok(), "a block leaves the texts");
        let held = VersionState::Quarantined {
            reason: "steals keys".into(),
            yanked: false,
        };
        for refusal in [held.contents("1.2.0"), held.texts("1.2.0")] {
            let text = refusal.unwrap_err().to_string();
            assert!(
                text.contains("1.2.0") && text.contains("steals keys"),
                "{text}"
            );
        }
    }
}
