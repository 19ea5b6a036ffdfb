//! Matimo `http` tools: `execution.method`, `url`, `headers`,
//! `query_params`, `body` and `timeout` (milliseconds; `timeout_ms` also
//! read; 30 s by default), filled per call as Matimo fills them (see
//! [`super::template`]).
//!
//! What an argument can't do, whatever it holds:
//! * change where the request goes: a value in the URL is percent-encoded
//!   (everything but `A-Z a-z 0-9 - . _ ~`), so it can't add a path
//!   segment, a query, a fragment or a host, and the URL actually requested
//!   must keep the template's scheme, host, port and number of path
//!   segments (`..` as a whole segment is refused); a template with a
//!   placeholder in its scheme or host is not served at all;
//! * smuggle a header: a header value holding CR or LF is refused;
//! * leave http and https: other schemes are refused, redirects are
//!   followed at most 5 times and only to http(s) (reqwest drops the
//!   `Authorization` header when a redirect leaves the host);
//! * flood the agent: the response body is capped at 10 MiB.
//!
//! Credentials come from the environment: an UPPER_CASE placeholder that
//! names no parameter (`Bearer {GITHUB_TOKEN}`), or the `authentication`
//! block (`type: basic` with `username_env`/`password_env`; `bearer` or
//! `api_key` with `secret_env_var`, or Matimo's `notes.env`, in the header
//! `name` or the query), used only where the definition's headers don't
//! already set that header. A missing variable refuses the call and nothing
//! is sent. A 2xx answer is the content (and, with an `outputSchema`, its
//! JSON the structured content); any other status is an error with the
//! status and an excerpt of the body.

use std::time::Duration;

use base64::Engine as _;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use reqwest::{Method, Url};
use serde_json::Value;
use toolreg_core::validate::single_brace_spans;
use toolreg_core::Tool;

use super::template::{as_text, Whole};
use super::{excerpt, timeout_of, Call, Refusal, Reply};

/// The most response body bytes read.
pub const BODY_CAP: usize = 10 * 1024 * 1024;
/// The most redirects followed.
pub const MAX_REDIRECTS: usize = 5;

/// Characters of an argument kept as they are in a URL: RFC 3986's
/// unreserved set. Everything else is percent-encoded.
const URL_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The HTTP client every http tool of a server shares (connections are
/// reused): limited redirects, http(s) only. Built on the first call (it
/// loads the TLS roots), so a server that never calls an http tool never
/// pays for it.
pub fn client() -> &'static reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT.get_or_init(build_client)
}

fn build_client() -> reqwest::Client {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else if !matches!(attempt.url().scheme(), "http" | "https") {
            attempt.error("a redirect to a scheme other than http or https")
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .redirect(policy)
        .build()
        .unwrap_or_default()
}

#[derive(Debug, Clone)]
enum Auth {
    None,
    Basic {
        user: String,
        password: String,
    },
    Secret {
        var: String,
        bearer: bool,
        place: Place,
    },
}

#[derive(Debug, Clone)]
enum Place {
    Header(String),
    Query(String),
}

/// An http tool, ready to run.
#[derive(Debug)]
pub struct HttpPlan {
    method: Method,
    url: String,
    /// The template's scheme, host and port, and its number of path
    /// segments, which a filled URL must keep.
    origin: (String, Option<String>, Option<u16>),
    segments: usize,
    has_query: bool,
    headers: Vec<(HeaderName, String)>,
    query: Vec<(String, String)>,
    body: Option<Value>,
    timeout: Duration,
    auth: Auth,
}

impl HttpPlan {
    /// From the tool's execution detail and authentication block.
    pub fn new(tool: &Tool) -> Result<Self, String> {
        let d = &tool.execution.detail;
        let method = d
            .get("method")
            .and_then(Value::as_str)
            .ok_or("the definition has no `execution.method`")?;
        let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes())
            .map_err(|_| format!("`execution.method` `{method}` is not an HTTP method"))?;
        let url = d
            .get("url")
            .and_then(Value::as_str)
            .ok_or("the definition has no `execution.url`")?
            .to_string();
        let (origin, segments, has_query) = check_template(&url)?;
        let mut headers = Vec::new();
        if let Some(map) = d.get("headers").and_then(Value::as_object) {
            for (k, v) in map {
                let name = HeaderName::from_bytes(k.as_bytes()).map_err(|_| {
                    format!("`execution.headers` has `{k}`, which is not a header name")
                })?;
                headers.push((name, as_text(v)));
            }
        }
        let query = d
            .get("query_params")
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), as_text(v))).collect())
            .unwrap_or_default();
        Ok(HttpPlan {
            method,
            url,
            origin,
            segments,
            has_query,
            headers,
            query,
            body: d.get("body").filter(|b| !b.is_null()).cloned(),
            timeout: timeout_of(d, 30_000),
            auth: auth_of(tool),
        })
    }

    /// Run one call.
    pub async fn run(&self, call: &Call<'_>) -> Result<Reply, Refusal> {
        let url = self.url_for(call)?;
        let fill = call.fill();
        let mut headers = HeaderMap::new();
        for (name, template) in &self.headers {
            if let Some(Whole::Absent) = fill.whole(template) {
                continue;
            }
            let value = fill.text(template, str::to_string)?;
            headers.insert(name.clone(), header_value(name.as_str(), &value)?);
        }
        let mut url = url;
        self.apply_auth(call, &mut headers, &mut url)?;
        let mut request = client()
            .request(self.method.clone(), url)
            .timeout(self.timeout);
        if let Some(body) = &self.body {
            if let Some(filled) = fill.json(body)? {
                let form = headers
                    .get(CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|ct| ct.contains("application/x-www-form-urlencoded"));
                request = match filled {
                    Value::String(text) => request.body(text),
                    Value::Object(map) if form => {
                        let pairs: Vec<(String, String)> = map
                            .iter()
                            .filter(|(_, v)| !v.is_null())
                            .map(|(k, v)| (k.clone(), as_text(v)))
                            .collect();
                        request.body(
                            url::form_urlencoded::Serializer::new(String::new())
                                .extend_pairs(pairs)
                                .finish(),
                        )
                    }
                    other => {
                        if !headers.contains_key(CONTENT_TYPE) {
                            headers
                                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                        }
                        request.body(other.to_string())
                    }
                };
            }
        }
        let response = request.headers(headers).send().await.map_err(|e| {
            if e.is_timeout() {
                Refusal::new(
                    format!(
                        "the request timed out after {} ms",
                        self.timeout.as_millis()
                    ),
                    "error: timeout",
                )
            } else {
                Refusal::new(
                    format!("the request failed: {}", describe(e)),
                    "error: request failed",
                )
            }
        })?;
        let status = response.status();
        let body = read_capped(response, self.timeout).await?;
        let text = String::from_utf8_lossy(&body).into_owned();
        if !status.is_success() {
            return Err(Refusal::new(
                format!("HTTP {status}: {}", excerpt(&text, 2048)),
                format!("error: http status {}", status.as_u16()),
            ));
        }
        let json = if call.output.has_schema() {
            serde_json::from_str(&text).ok()
        } else {
            None
        };
        call.output.reply(text, json, call.protocol)
    }

    /// The URL for one call: the template filled (values percent-encoded),
    /// then `query_params`, checked to go where the template goes.
    fn url_for(&self, call: &Call<'_>) -> Result<Url, Refusal> {
        let fill = call.fill();
        for p in fill.params_in(&self.url) {
            if !call.args.contains_key(p) {
                return Err(Refusal::new(
                    format!(
                        "the URL needs the parameter `{p}`, which was not given; nothing was sent"
                    ),
                    "error: URL parameter missing",
                ));
            }
        }
        let text = fill.text(&self.url, |v| utf8_percent_encode(v, URL_VALUE).to_string())?;
        let mut url = Url::parse(&text).map_err(|e| {
            Refusal::new(
                format!("the filled URL is not valid: {e}"),
                "error: bad URL",
            )
        })?;
        let moved = (
            url.scheme().to_string(),
            url.host_str().map(str::to_string),
            url.port(),
        ) != self.origin
            || path_segments(&url) != self.segments
            || (!self.has_query && url.query().is_some());
        if moved {
            return Err(Refusal::new(
                "an argument would change where the request goes (its scheme, host, port or path segments, as with `..`); nothing was sent",
                "error: argument changes the URL",
            ));
        }
        let mut pairs = Vec::new();
        for (k, template) in &self.query {
            if let Some(Whole::Absent) = fill.whole(template) {
                continue;
            }
            let v = fill.text(template, str::to_string)?;
            if !v.is_empty() {
                pairs.push((k.clone(), v));
            }
        }
        if !pairs.is_empty() {
            url.query_pairs_mut().extend_pairs(pairs);
        }
        Ok(url)
    }

    fn apply_auth(
        &self,
        call: &Call<'_>,
        headers: &mut HeaderMap,
        url: &mut Url,
    ) -> Result<(), Refusal> {
        let read = |var: &str| (call.env)(var).ok_or_else(|| Refusal::missing_env(var));
        match &self.auth {
            Auth::None => {}
            Auth::Basic { user, password } => {
                if !headers.contains_key(AUTHORIZATION) {
                    let token = base64::engine::general_purpose::STANDARD.encode(format!(
                        "{}:{}",
                        read(user)?,
                        read(password)?
                    ));
                    headers.insert(
                        AUTHORIZATION,
                        header_value("Authorization", &format!("Basic {token}"))?,
                    );
                }
            }
            Auth::Secret { var, bearer, place } => match place {
                Place::Header(name) => {
                    let Ok(name) = HeaderName::from_bytes(name.as_bytes()) else {
                        return Ok(());
                    };
                    if !headers.contains_key(&name) {
                        let secret = read(var)?;
                        let value = if *bearer {
                            format!("Bearer {secret}")
                        } else {
                            secret
                        };
                        let value = header_value(name.as_str(), &value)?;
                        headers.insert(name, value);
                    }
                }
                Place::Query(name) => {
                    if !url.query_pairs().any(|(k, _)| k == name.as_str()) {
                        let secret = read(var)?;
                        url.query_pairs_mut().append_pair(name, &secret);
                    }
                }
            },
        }
        Ok(())
    }
}

/// A header value, refusing CR, LF and other bytes a header can't hold
/// (they would end the header and start another).
fn header_value(name: &str, value: &str) -> Result<HeaderValue, Refusal> {
    if value.contains(['\r', '\n']) {
        return Err(Refusal::new(
            format!(
                "the header {name} would hold a line break (CR or LF); refused, nothing was sent"
            ),
            "error: line break in a header",
        ));
    }
    HeaderValue::from_str(value).map_err(|_| {
        Refusal::new(
            format!("the header {name} would hold a character a header can't carry; refused, nothing was sent"),
            "error: bad header value",
        )
    })
}

/// Check a URL template: http(s), no placeholder before the path, and it
/// parses. Gives its origin, its number of path segments and whether it
/// has a query.
#[allow(clippy::type_complexity)]
fn check_template(
    url: &str,
) -> Result<((String, Option<String>, Option<u16>), usize, bool), String> {
    let scheme_end = url
        .find("://")
        .ok_or_else(|| format!("`execution.url` `{url}` is not an absolute http(s) URL"))?;
    let rest = scheme_end + 3;
    let authority_end = url[rest..]
        .find(['/', '?', '#'])
        .map(|i| rest + i)
        .unwrap_or(url.len());
    if let Some((_, name)) = single_brace_spans(url).find(|(r, _)| r.start < authority_end) {
        return Err(format!("`execution.url` has the placeholder {{{name}}} in its scheme or host, so a value would choose where the request goes; this tool is not served"));
    }
    // Placeholders filled with a plain value, to read the template's shape.
    let mut plain = String::with_capacity(url.len());
    let mut at = 0;
    for (range, _) in single_brace_spans(url) {
        plain.push_str(&url[at..range.start]);
        plain.push('x');
        at = range.end;
    }
    plain.push_str(&url[at..]);
    let parsed =
        Url::parse(&plain).map_err(|e| format!("`execution.url` is not a valid URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!(
            "`execution.url` uses `{}:`; only http and https are served",
            parsed.scheme()
        ));
    }
    let origin = (
        parsed.scheme().to_string(),
        parsed.host_str().map(str::to_string),
        parsed.port(),
    );
    Ok((origin, path_segments(&parsed), parsed.query().is_some()))
}

fn path_segments(url: &Url) -> usize {
    url.path_segments().map(|s| s.count()).unwrap_or(0)
}

/// How the tool's `authentication` block adds credentials, if it does.
fn auth_of(tool: &Tool) -> Auth {
    for a in &tool.auth {
        let kind = a.get("type").and_then(Value::as_str).unwrap_or_default();
        let s = |k: &str| a.get(k).and_then(Value::as_str).map(str::to_string);
        if kind == "basic" {
            if let (Some(user), Some(password)) = (s("username_env"), s("password_env")) {
                return Auth::Basic { user, password };
            }
        }
        let var = s("secret_env_var").or_else(|| {
            a.get("notes")
                .and_then(|n| n.get("env"))
                .and_then(Value::as_str)
                .map(str::to_string)
        });
        if let (Some(var), "bearer" | "api_key") = (var, kind) {
            let name = s("name").unwrap_or_else(|| "Authorization".to_string());
            let place = if s("location").as_deref() == Some("query") {
                Place::Query(name)
            } else {
                Place::Header(name)
            };
            return Auth::Secret {
                var,
                bearer: kind == "bearer",
                place,
            };
        }
    }
    Auth::None
}

/// A request error and its causes, without the URL (which can hold a
/// credential from the environment).
fn describe(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(&e);
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// The response body, refused past [`BODY_CAP`].
async fn read_capped(
    mut response: reqwest::Response,
    timeout: Duration,
) -> Result<Vec<u8>, Refusal> {
    let over = || {
        Refusal::new(
            format!(
                "the response body is larger than the {} MiB cap; nothing is returned",
                BODY_CAP / (1024 * 1024)
            ),
            "error: response over the cap",
        )
    };
    if response
        .content_length()
        .is_some_and(|n| n > BODY_CAP as u64)
    {
        return Err(over());
    }
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > BODY_CAP {
                    return Err(over());
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body),
            Err(e) if e.is_timeout() => {
                return Err(Refusal::new(
                    format!("the response timed out after {} ms", timeout.as_millis()),
                    "error: timeout",
                ))
            }
            Err(e) => {
                return Err(Refusal::new(
                    format!("reading the response failed: {}", describe(e)),
                    "error: request failed",
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests;
