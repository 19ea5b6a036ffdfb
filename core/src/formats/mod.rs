//! Format detection and the one entry point, [`load`]: from a tool directory
//! to a validated canonical [`Tool`].

pub mod matimo;
pub mod mcp;
pub mod prompt;
pub mod shinkai;

use crate::error::{Error, Problem};
use crate::files::ToolFiles;
use crate::model::Tool;

/// A successfully loaded tool and the warnings found on the way.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub tool: Tool,
    pub warnings: Vec<Problem>,
}

/// Detect the format of the tool directory, parse its definition, apply
/// `toolreg.toml`, validate, and return the canonical tool — or
/// [`Error::Invalid`] with every problem found.
pub fn load(files: &ToolFiles) -> Result<Loaded, Error> {
    let _ = files;
    Err(Error::Invalid(vec![Problem::new("", "not implemented yet")]))
}
