//! The user's toolreg configuration: which registry to talk to and the
//! token for it. Tokens live in `<config dir>/toolreg/credentials.toml`
//! (mode 0600), keyed by registry URL; `TOOLREG_CONFIG_DIR` replaces the
//! config dir (tests use it so they never touch `$HOME`).
//!
//! Precedence for the registry: `--registry` flag > `TOOLREG_REGISTRY` >
//! the project's `toolreg.toml [registry] url` > the registry stored by the
//! last `toolreg login --registry` > [`DEFAULT_REGISTRY`]. For the token:
//! `--token` > `TOOLREG_TOKEN` > the token stored for that registry.
//! (clap reads the two environment variables into the flags.)

use std::io::Write;
use std::path::{Path, PathBuf};

use toml_edit::{value, DocumentMut, Item, Table};

use crate::error::{Error, Result};

/// The registry used when nothing else names one.
pub const DEFAULT_REGISTRY: &str = "http://127.0.0.1:8080";

/// The directory holding `credentials.toml`.
pub fn config_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("TOOLREG_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    dirs::config_dir()
        .map(|d| d.join("toolreg"))
        .ok_or_else(|| {
            Error::Config("cannot find the user's config directory; set TOOLREG_CONFIG_DIR".into())
        })
}

/// Registry URLs are compared and stored without a trailing slash.
pub fn normalize_registry(url: &str) -> Result<String> {
    let trimmed = url.trim().trim_end_matches('/');
    let parsed = url::Url::parse(trimmed)
        .map_err(|e| Error::Usage(format!("registry URL `{url}` is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Error::Usage(format!(
            "registry URL `{url}` must start with http:// or https://"
        )));
    }
    Ok(trimmed.to_string())
}

/// The stored credentials: a default registry and a token per registry.
#[derive(Debug)]
pub struct Credentials {
    path: PathBuf,
    doc: DocumentMut,
}

impl Credentials {
    /// Read `credentials.toml` from [`config_dir`] (empty if it does not exist).
    pub fn load() -> Result<Self> {
        Self::load_from(&config_dir()?.join("credentials.toml"))
    }

    pub fn load_from(path: &Path) -> Result<Self> {
        let doc = match std::fs::read_to_string(path) {
            Ok(text) => text.parse::<DocumentMut>().map_err(|e| {
                Error::Config(format!(
                    "{} is not valid TOML: {}",
                    path.display(),
                    e.to_string().trim()
                ))
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => DocumentMut::new(),
            Err(e) => return Err(Error::io("could not read", path, e)),
        };
        Ok(Credentials {
            path: path.to_path_buf(),
            doc,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The registry stored by `toolreg login --registry URL`.
    pub fn default_registry(&self) -> Option<String> {
        self.doc
            .get("default_registry")
            .and_then(|v| v.as_str())
            .map(str::to_string)
    }

    /// The token stored for `registry`.
    pub fn token(&self, registry: &str) -> Option<String> {
        self.doc
            .get("registries")
            .and_then(|r| r.get(registry))
            .and_then(|r| r.get("token"))
            .and_then(|t| t.as_str())
            .map(str::to_string)
    }

    /// Remember `token` for `registry`, and make `registry` the default.
    pub fn set_token(&mut self, registry: &str, token: &str) {
        self.doc["default_registry"] = value(registry);
        if !self.doc.contains_table("registries") {
            let mut t = Table::new();
            t.set_implicit(true);
            self.doc["registries"] = Item::Table(t);
        }
        let mut entry = Table::new();
        entry["token"] = value(token);
        self.doc["registries"][registry] = Item::Table(entry);
    }

    /// Write the file with mode 0600 (created that way, and tightened if it existed).
    pub fn save(&self) -> Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io("could not create", dir, e))?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options
            .open(&self.path)
            .map_err(|e| Error::io("could not write", &self.path, e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| Error::io("could not restrict permissions of", &self.path, e))?;
        }
        file.write_all(self.doc.to_string().as_bytes())
            .map_err(|e| Error::io("could not write", &self.path, e))
    }
}

/// Which registry and token a command uses, after applying precedence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub registry: String,
    pub token: Option<String>,
}

/// Apply the precedence rules. `flag_registry`/`flag_token` already include
/// the environment variables (clap's `env`); `project_registry` is the
/// project's `[registry] url`.
pub fn settings(
    flag_registry: Option<&str>,
    flag_token: Option<&str>,
    project_registry: Option<&str>,
    stored: &Credentials,
) -> Result<Settings> {
    let registry = match (flag_registry, project_registry, stored.default_registry()) {
        (Some(r), _, _) => normalize_registry(r)?,
        (None, Some(r), _) => normalize_registry(r)?,
        (None, None, Some(r)) => normalize_registry(&r)?,
        (None, None, None) => DEFAULT_REGISTRY.to_string(),
    };
    let token = match flag_token.filter(|t| !t.is_empty()) {
        Some(t) => Some(t.to_string()),
        None => stored.token(&registry),
    };
    Ok(Settings { registry, token })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_flag_then_project_then_stored_then_default() {
        let dir = tempfile::tempdir().unwrap();
        let mut creds = Credentials::load_from(&dir.path().join("credentials.toml")).unwrap();
        let s = settings(None, None, None, &creds).unwrap();
        assert_eq!(
            s,
            Settings {
                registry: DEFAULT_REGISTRY.into(),
                token: None
            }
        );

        creds.set_token("http://stored:1", "trg_stored");
        let s = settings(None, None, None, &creds).unwrap();
        assert_eq!(s.registry, "http://stored:1");
        assert_eq!(s.token.as_deref(), Some("trg_stored"));

        let s = settings(None, None, Some("http://project:2/"), &creds).unwrap();
        assert_eq!(s.registry, "http://project:2");
        assert_eq!(s.token, None, "a token for another registry is never sent");

        let s = settings(
            Some("http://stored:1"),
            Some("trg_flag"),
            Some("http://project:2"),
            &creds,
        )
        .unwrap();
        assert_eq!(s.registry, "http://stored:1");
        assert_eq!(s.token.as_deref(), Some("trg_flag"));
    }

    #[test]
    fn bad_registry_url_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let creds = Credentials::load_from(&dir.path().join("c.toml")).unwrap();
        let err = settings(Some("not a url"), None, None, &creds).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("not a url"));
    }

    #[cfg(unix)]
    #[test]
    fn saved_credentials_are_private_and_round_trip() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/credentials.toml");
        let mut creds = Credentials::load_from(&path).unwrap();
        creds.set_token("http://a:1", "trg_a");
        creds.set_token("http://b:2", "trg_b");
        creds.save().unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let again = Credentials::load_from(&path).unwrap();
        assert_eq!(again.token("http://a:1").as_deref(), Some("trg_a"));
        assert_eq!(again.token("http://b:2").as_deref(), Some("trg_b"));
        assert_eq!(again.default_registry().as_deref(), Some("http://b:2"));
    }

    #[test]
    fn corrupt_credentials_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("credentials.toml");
        std::fs::write(&path, "registries = [").unwrap();
        let err = Credentials::load_from(&path).unwrap_err();
        assert!(err.to_string().contains("credentials.toml"), "{err}");
    }
}
