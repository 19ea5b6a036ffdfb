//! The registry's HTTP API as the CLI uses it. The answers are read into
//! the `toolreg-api` types, the same the server sends (docs/api.md).
//! Error answers become [`Error::Api`] showing the problem+json `detail`
//! and every `errors[]` entry; network failures name the URL and the cause.

use std::io::Read;
use std::time::Duration;

use reqwest::blocking::{Client as Http, RequestBuilder, Response};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use reqwest::Method;
use serde::de::DeserializeOwned;
use toolreg_api::{
    Attestation, DeprecationChange, DeprecationRequest, EncodableReport, EncodableTool,
    EncodableTrustedPublisher, EncodableVersion, Me, NewTrustedPublisherRequest,
    OidcExchangeRequest, OidcExchanged, OwnerInvitations, Owners, OwnersChange, ProblemBody,
    PublishedVersion, QuarantineState, ReasonRequest, Resolved, SearchAnswer, TrustedPublisherList,
    VersionDiff, YankState,
};

use crate::error::{ApiError, Error, Result};

/// A client for one registry, with an optional token.
#[derive(Debug, Clone)]
pub struct Client {
    base: String,
    token: Option<String>,
    http: Http,
}

/// A downloaded bundle and the URL it came from.
#[derive(Debug)]
pub struct Download {
    pub url: String,
    pub bytes: Vec<u8>,
}

/// Largest bundle the CLI will download (the server's compressed limit).
const MAX_DOWNLOAD: u64 = 10 * 1024 * 1024;

/// Largest JSON or text answer the CLI reads (a registry answer is far
/// smaller; this keeps a broken or hostile one from filling memory).
const MAX_ANSWER: u64 = 16 * 1024 * 1024;

/// Largest error body the CLI reads; only its `detail` and `errors` are shown.
const MAX_ERROR_BODY: u64 = 64 * 1024;

impl Client {
    pub fn new(base: &str, token: Option<String>) -> Result<Self> {
        Self::with_timeouts(
            base,
            token,
            Duration::from_secs(10),
            Duration::from_secs(300),
        )
    }

    /// A client that gives up quickly (5 s to connect, 15 s an answer), for
    /// questions a command can do without (`verify` and `export` asking
    /// whether a pinned version was quarantined since).
    pub fn quick(base: &str) -> Result<Self> {
        Self::with_timeouts(base, None, Duration::from_secs(5), Duration::from_secs(15))
    }

    fn with_timeouts(
        base: &str,
        token: Option<String>,
        connect: Duration,
        total: Duration,
    ) -> Result<Self> {
        let http = Http::builder()
            .connect_timeout(connect)
            .timeout(total)
            .user_agent(concat!("toolreg/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::Network {
                url: base.to_string(),
                reason: e.to_string(),
            })?;
        Ok(Client {
            base: base.trim_end_matches('/').to_string(),
            token,
            http,
        })
    }

    pub fn registry(&self) -> &str {
        &self.base
    }

    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// The same client with `token` (a token exchanged through trusted publishing).
    pub fn with_token(mut self, token: String) -> Self {
        self.token = Some(token);
        self
    }

    fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    fn request(&self, method: Method, path: &str, auth: bool) -> Result<(String, RequestBuilder)> {
        let url = self.url(path);
        let mut rb = self.http.request(method, &url);
        if auth {
            let token = self.token.as_ref().ok_or_else(|| Error::NoToken {
                registry: self.base.clone(),
            })?;
            rb = rb.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        Ok((url, rb))
    }

    fn send(&self, action: &str, url: &str, rb: RequestBuilder) -> Result<Response> {
        let response = rb.send().map_err(|e| network_error(url, &e))?;
        if response.status().is_success() {
            Ok(response)
        } else {
            Err(api_error(action, url, response))
        }
    }

    fn json<T: DeserializeOwned>(url: &str, response: Response) -> Result<T> {
        let bytes = read_capped(url, response, MAX_ANSWER)?;
        serde_json::from_slice(&bytes).map_err(|e| Error::BadAnswer {
            url: url.to_string(),
            reason: e.to_string(),
        })
    }

    /// GET a JSON document (no token needed).
    pub fn get_json<T: DeserializeOwned>(
        &self,
        action: &str,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<T> {
        let (url, rb) = self.request(Method::GET, path, false)?;
        let rb = rb.query(query);
        let response = self.send(action, &url, rb)?;
        Self::json(&url, response)
    }

    /// GET a text document (no token needed).
    pub fn get_text(&self, action: &str, path: &str) -> Result<String> {
        let (url, rb) = self.request(Method::GET, path, false)?;
        let response = self.send(action, &url, rb)?;
        let bytes = read_capped(&url, response, MAX_ANSWER)?;
        String::from_utf8(bytes).map_err(|_| Error::BadAnswer {
            url,
            reason: "the answer is not UTF-8 text".to_string(),
        })
    }

    pub fn me(&self) -> Result<Me> {
        let (url, rb) = self.request(Method::GET, "/api/v1/me", true)?;
        let response = self.send("checking the token", &url, rb)?;
        Self::json(&url, response)
    }

    /// Resolve `req` for `name`: the answer and its version, parsed.
    pub fn resolve(
        &self,
        name: &str,
        req: &semver::VersionReq,
    ) -> Result<(Resolved, semver::Version)> {
        let path = format!("/api/v1/resolve/{}", seg(name));
        let answer: Resolved = self
            .get_json(
                &format!("resolving {name} {req}"),
                &path,
                &[("req", req.to_string())],
            )
            .map_err(|e| quarantined(name, e))?;
        let version = semver::Version::parse(&answer.version).map_err(|e| Error::BadAnswer {
            url: self.url(&path),
            reason: format!("version `{}` is not SemVer: {e}", answer.version),
        })?;
        Ok((answer, version))
    }

    pub fn tool(&self, name: &str) -> Result<EncodableTool> {
        self.get_json(
            &format!("looking up {name}"),
            &format!("/api/v1/tools/{}", seg(name)),
            &[],
        )
    }

    pub fn version(&self, name: &str, version: &str) -> Result<EncodableVersion> {
        self.get_json(
            &format!("looking up {name} {version}"),
            &format!("/api/v1/tools/{}/{}", seg(name), seg(version)),
            &[],
        )
    }

    /// What changed in the definition from version `from` to `to`.
    /// The diff between two versions; its new findings are the flags and
    /// blocks only (a note is nothing a project accepts).
    pub fn diff(&self, name: &str, from: &str, to: &str) -> Result<VersionDiff> {
        let mut d: VersionDiff = self.get_json(
            &format!("comparing {name} {from} with {to}"),
            &format!("/api/v1/tools/{}/diff", seg(name)),
            &[("from", from.to_string()), ("to", to.to_string())],
        )?;
        d.new_findings.retain(|f| !f.is_note());
        Ok(d)
    }

    pub fn search(&self, query: &[(&str, String)]) -> Result<SearchAnswer> {
        self.get_json("searching", "/api/v1/search", query)
    }

    /// Download a version's bundle. A blocked version becomes
    /// [`Error::Blocked`], a quarantined one [`Error::Quarantined`].
    pub fn download(&self, name: &str, version: &str) -> Result<Download> {
        let (url, rb) = self.request(
            Method::GET,
            &format!("/api/v1/tools/{}/{}/download", seg(name), seg(version)),
            false,
        )?;
        let response = match self.send(&format!("downloading {name} {version}"), &url, rb) {
            Err(Error::Api(api))
                if api.status == 403
                    && api.kind.as_deref().is_some_and(|k| k.ends_with("blocked")) =>
            {
                return Err(Error::Blocked {
                    name: name.into(),
                    version: version.into(),
                    reason: api.detail,
                })
            }
            other => other.map_err(|e| quarantined(name, e))?,
        };
        let mut bytes = Vec::new();
        response
            .take(MAX_DOWNLOAD + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::Network {
                url: url.clone(),
                reason: e.to_string(),
            })?;
        if bytes.len() as u64 > MAX_DOWNLOAD {
            return Err(Error::BadAnswer {
                url,
                reason: format!("the bundle is larger than {MAX_DOWNLOAD} bytes"),
            });
        }
        Ok(Download { url, bytes })
    }

    /// Upload a bundle; `body` reads it (wrapped by a progress bar), `len` is its size.
    pub fn publish(&self, body: impl Read + Send + 'static, len: u64) -> Result<PublishedVersion> {
        let (url, rb) = self.request(Method::POST, "/api/v1/tools", true)?;
        let rb = rb
            .header(CONTENT_TYPE, "application/gzip")
            .body(reqwest::blocking::Body::sized(body, len));
        let response = self.send("publishing", &url, rb)?;
        Self::json(&url, response)
    }

    pub fn yank(&self, name: &str, version: &str, undo: bool) -> Result<YankState> {
        let (method, verb, action) = if undo {
            (Method::PUT, "unyank", "un-yanking")
        } else {
            (Method::DELETE, "yank", "yanking")
        };
        let (url, rb) = self.request(
            method,
            &format!("/api/v1/tools/{}/{}/{verb}", seg(name), seg(version)),
            true,
        )?;
        let response = self.send(&format!("{action} {name} {version}"), &url, rb)?;
        Self::json(&url, response)
    }

    /// Report a version to the registry's administrators.
    pub fn report(&self, name: &str, version: &str, reason: &str) -> Result<EncodableReport> {
        let (url, rb) = self.request(
            Method::POST,
            &format!("/api/v1/tools/{}/{}/reports", seg(name), seg(version)),
            true,
        )?;
        let rb = rb.json(&ReasonRequest {
            reason: Some(reason.to_string()),
        });
        let response = self.send(&format!("reporting {name} {version}"), &url, rb)?;
        Self::json(&url, response)
    }

    /// Quarantine a version with `reason` (`Some`), or lift its quarantine
    /// (`None`); administrators only.
    pub fn quarantine(
        &self,
        name: &str,
        version: &str,
        reason: Option<&str>,
    ) -> Result<QuarantineState> {
        let path = format!("/api/v1/tools/{}/{}/quarantine", seg(name), seg(version));
        let (action, rb) = match reason {
            Some(reason) => {
                let (url, rb) = self.request(Method::PUT, &path, true)?;
                let rb = rb.json(&ReasonRequest {
                    reason: Some(reason.to_string()),
                });
                (format!("quarantining {name} {version}"), (url, rb))
            }
            None => (
                format!("lifting the quarantine of {name} {version}"),
                self.request(Method::DELETE, &path, true)?,
            ),
        };
        let (url, rb) = rb;
        let response = self.send(&action, &url, rb)?;
        Self::json(&url, response)
    }

    /// Deprecate `name`'s versions matching `req` (every one when `None`)
    /// with `message` and `successor`, or lift their deprecation when
    /// `message` is `None`; owners only.
    pub fn deprecate(
        &self,
        name: &str,
        req: Option<&str>,
        message: Option<&str>,
        successor: Option<&str>,
    ) -> Result<DeprecationChange> {
        let path = format!("/api/v1/tools/{}/deprecation", seg(name));
        let (action, url, rb) = match message {
            Some(message) => {
                let (url, rb) = self.request(Method::PUT, &path, true)?;
                let rb = rb.json(&DeprecationRequest {
                    message: message.to_string(),
                    successor: successor.map(str::to_string),
                    req: req.map(str::to_string),
                });
                (format!("deprecating {name}"), url, rb)
            }
            None => {
                let (url, rb) = self.request(Method::DELETE, &path, true)?;
                let rb = match req {
                    Some(req) => rb.query(&[("req", req)]),
                    None => rb,
                };
                (format!("lifting the deprecation of {name}"), url, rb)
            }
        };
        let response = self.send(&action, &url, rb)?;
        Self::json(&url, response)
    }

    pub fn owners(&self, name: &str) -> Result<Owners> {
        self.get_json(
            &format!("listing owners of {name}"),
            &format!("/api/v1/tools/{}/owners", seg(name)),
            &[],
        )
    }

    pub fn change_owners(&self, name: &str, add: bool, logins: &[String]) -> Result<Owners> {
        let (method, action) = if add {
            (Method::PUT, "adding owners to")
        } else {
            (Method::DELETE, "removing owners from")
        };
        let (url, rb) =
            self.request(method, &format!("/api/v1/tools/{}/owners", seg(name)), true)?;
        let rb = rb.json(&OwnersChange {
            logins: logins.to_vec(),
        });
        let response = self.send(&format!("{action} {name}"), &url, rb)?;
        Self::json(&url, response)
    }

    /// The logged-in user's invitations to own tools.
    pub fn my_invitations(&self) -> Result<OwnerInvitations> {
        let (url, rb) = self.request(Method::GET, "/api/v1/me/invitations", true)?;
        let response = self.send("listing your invitations", &url, rb)?;
        Self::json(&url, response)
    }

    /// Accept (or decline) the logged-in user's invitation to own `name`.
    pub fn answer_invitation(&self, name: &str, accept: bool) -> Result<Owners> {
        let (method, action) = if accept {
            (Method::PUT, "accepting the invitation to own")
        } else {
            (Method::DELETE, "declining the invitation to own")
        };
        let (url, rb) = self.request(
            method,
            &format!("/api/v1/me/invitations/{}", seg(name)),
            true,
        )?;
        let response = self.send(&format!("{action} {name}"), &url, rb)?;
        Self::json(&url, response)
    }
}

impl Client {
    /// A tool's trusted publishers (owners only).
    pub fn trusted_publishers(&self, name: &str) -> Result<TrustedPublisherList> {
        let (url, rb) = self.request(
            Method::GET,
            &format!("/api/v1/tools/{}/trusted-publishers", seg(name)),
            true,
        )?;
        let response = self.send(&format!("listing trusted publishers of {name}"), &url, rb)?;
        Self::json(&url, response)
    }

    /// Add a trusted publisher to a tool (owners only).
    pub fn add_trusted_publisher(
        &self,
        name: &str,
        new: &NewTrustedPublisherRequest,
    ) -> Result<EncodableTrustedPublisher> {
        let (url, rb) = self.request(
            Method::POST,
            &format!("/api/v1/tools/{}/trusted-publishers", seg(name)),
            true,
        )?;
        let response = self.send(
            &format!("adding a trusted publisher to {name}"),
            &url,
            rb.json(new),
        )?;
        Self::json(&url, response)
    }

    /// Remove trusted publisher `id` from a tool (owners only).
    pub fn remove_trusted_publisher(&self, name: &str, id: i64) -> Result<()> {
        let (url, rb) = self.request(
            Method::DELETE,
            &format!("/api/v1/tools/{}/trusted-publishers/{id}", seg(name)),
            true,
        )?;
        self.send(
            &format!("removing trusted publisher {id} from {name}"),
            &url,
            rb,
        )?;
        Ok(())
    }

    /// Trade a CI job's ID token for a short-lived token that publishes `tools`.
    pub fn oidc_exchange(&self, id_token: &str, tools: &[&str]) -> Result<OidcExchanged> {
        let (url, rb) = self.request(Method::POST, "/api/v1/oidc/exchange", false)?;
        let rb = rb.json(&OidcExchangeRequest {
            token: id_token.to_string(),
            tools: Some(tools.iter().map(|t| t.to_string()).collect()),
        });
        let response = self.send("exchanging the CI job's ID token", &url, rb)?;
        Self::json(&url, response)
    }

    /// A version's signed attestation.
    pub fn attestation(&self, name: &str, version: &str) -> Result<Attestation> {
        self.get_json(
            &format!("fetching the attestation of {name} {version}"),
            &format!("/api/v1/tools/{}/{}/attestation", seg(name), seg(version)),
            &[],
        )
    }
}

/// A `403 quarantined` answer about tool `name` as [`Error::Quarantined`]
/// (the registry's detail names the version and the reason); any other
/// error as it is.
fn quarantined(name: &str, err: Error) -> Error {
    match err {
        Error::Api(api) if api.status == 403 && api.kind.as_deref() == Some("quarantined") => {
            // Resolve's detail already starts with the tool's name.
            let detail = api
                .detail
                .strip_prefix(&format!("{name}: "))
                .unwrap_or(&api.detail)
                .to_string();
            Error::Quarantined {
                name: name.to_string(),
                detail,
                url: api.url,
            }
        }
        other => other,
    }
}

/// The answer's body, refused with [`Error::BadAnswer`] past `limit` bytes
/// (read no further than one byte beyond it).
pub(crate) fn read_capped(url: &str, response: Response, limit: u64) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    response
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::Network {
            url: url.to_string(),
            reason: e.to_string(),
        })?;
    if bytes.len() as u64 > limit {
        return Err(Error::BadAnswer {
            url: url.to_string(),
            reason: format!("the answer is larger than the CLI's limit of {limit} bytes"),
        });
    }
    Ok(bytes)
}

/// A path segment, percent-encoded.
fn seg(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

pub(crate) fn network_error(url: &str, e: &reqwest::Error) -> Error {
    // reqwest's top-level message is vague; the innermost cause says why.
    let mut reason = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        reason = s.to_string();
        source = s.source();
    }
    if e.is_timeout() {
        reason = format!("timed out ({reason})");
    }
    Error::Network {
        url: url.to_string(),
        reason,
    }
}

fn api_error(action: &str, url: &str, response: Response) -> Error {
    let status = response.status();
    let mut raw = Vec::new();
    let _ = response.take(MAX_ERROR_BODY + 1).read_to_end(&mut raw);
    if raw.len() as u64 > MAX_ERROR_BODY {
        // Not read further: the status and a note stand in for the body.
        let reason = status.canonical_reason().unwrap_or("error");
        return Error::Api(Box::new(ApiError {
            action: action.to_string(),
            url: url.to_string(),
            status: status.as_u16(),
            kind: None,
            title: Some(reason.to_string()),
            detail: format!(
                "{reason} (the error body is larger than the CLI's limit of {MAX_ERROR_BODY} bytes and was not read)"
            ),
            errors: Vec::new(),
        }));
    }
    let text = String::from_utf8_lossy(&raw);
    let body: ProblemBody = serde_json::from_str(&text).unwrap_or_default();
    let detail = Some(body.detail)
        .filter(|d| !d.trim().is_empty())
        .or_else(|| {
            let t = text.trim();
            (!t.is_empty() && t.len() <= 300 && !t.starts_with('{')).then(|| t.to_string())
        })
        .unwrap_or_else(|| status.canonical_reason().unwrap_or("error").to_string());
    Error::Api(Box::new(ApiError {
        action: action.to_string(),
        url: url.to_string(),
        status: status.as_u16(),
        kind: Some(body.kind)
            .filter(|k| !k.is_empty())
            .map(|k| k.rsplit('/').next().unwrap_or(&k).to_string()),
        title: Some(body.title)
            .filter(|t| !t.is_empty())
            .or_else(|| status.canonical_reason().map(str::to_string)),
        detail,
        errors: body.errors.unwrap_or_default(),
    }))
}
