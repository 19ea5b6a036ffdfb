//! Database rows and the queries on them, one module per noun.

pub mod audit;
pub mod change;
pub mod deprecation;
pub mod invitation;
pub mod owner;
pub mod quarantine;
pub mod report;
pub mod skill_archive;
pub mod state_change;
pub mod stored;
pub mod tier;
pub mod token;
pub mod tool;
pub mod tool_summary;
pub mod trusted_publisher;
pub mod user;
pub mod version;

pub use audit::NewAudit;
pub use token::{Scope, Token};
pub use tool::ToolRow;
pub use user::User;
pub use version::{VersionRow, VersionState};
