//! The string walker: visits every string of a definition — object keys
//! included — at any depth, knows its RFC 6901 pointer, and decides from its
//! position what kind of string it is (the call name, a property name, an
//! enum value, another key, or text). Each string is then handed to the
//! rules.

use serde_json::Value;

use super::collect::{Findings, Take};
use super::{prose, secrets, unicode, Context, Finding, Rule, Severity};
use crate::model::Format;

/// One step of a pointer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// What a string is, by its position in the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// The name an agent calls the tool by.
    CallName,
    /// A parameter or property name (a key under `properties`, a Matimo
    /// parameter, a prompt variable name).
    PropertyName,
    /// An item of `enum` (or a prompt variable's `allowed_values`).
    EnumValue,
    /// Any other object key, or a `required` item.
    Key,
    /// Any other string value: descriptions, titles, defaults, examples,
    /// URLs, headers, prompt text.
    Text,
}

impl Role {
    /// Identifiers are names an agent uses verbatim; everything but text.
    pub fn is_identifier(self) -> bool {
        self != Role::Text
    }

    /// The role in words, for messages.
    pub fn noun(self) -> &'static str {
        match self {
            Role::CallName => "tool name",
            Role::PropertyName => "parameter name",
            Role::EnumValue => "enum value",
            Role::Key => "key",
            Role::Text => "text",
        }
    }
}

/// Where a stretch of a text file sits, for findings named by file and
/// line (`/<file>:<line>`) rather than by JSON pointer.
#[derive(Clone, Copy)]
pub(crate) struct Lines<'a> {
    /// The file's name, as in the pointer.
    pub file: &'a str,
    /// The text the site is a stretch of (a whole file, or a skill's body).
    pub whole: &'a str,
    /// Byte offset of the site's text in `whole`.
    pub offset: usize,
    /// The line number of `whole`'s first line in the file.
    pub first_line: usize,
}

impl Lines<'_> {
    /// (line number, char offset in that line, the line) of byte `b` of
    /// `whole`.
    pub fn locate(&self, b: usize) -> (usize, usize, &str) {
        let b = b.min(self.whole.len());
        let before = &self.whole[..b];
        let start = before.rfind('\n').map_or(0, |i| i + 1);
        let end = self.whole[b..]
            .find('\n')
            .map_or(self.whole.len(), |i| b + i);
        let number = self.first_line + before.bytes().filter(|&c| c == b'\n').count();
        (
            number,
            self.whole[start..b].chars().count(),
            &self.whole[start..end],
        )
    }

    /// The pointer of line `number`.
    pub fn pointer(&self, number: usize) -> String {
        format!("/{}:{number}", self.file)
    }
}

/// One string as the rules see it.
pub(crate) struct Site<'a> {
    pub text: &'a str,
    pub role: Role,
    path: &'a [Seg<'a>],
    /// For a stretch of a text file: where it sits (findings then name
    /// the file and line).
    pub lines: Option<Lines<'a>>,
    /// The text is written to instruct the agent (a skill's visible
    /// text): the rules of [`Rule::is_voice`] don't apply.
    pub instructs_agent: bool,
    /// The value sits under a secret-like key (`api_key`, `password`,
    /// `Authorization`, or it is the default/example of such a property).
    pub secret_key: bool,
    /// The value sits under a client-secret key: any value that is not a
    /// placeholder is a secret.
    pub client_secret: bool,
}

impl<'a> Site<'a> {
    /// A stretch of a text file (`text`, at `lines`), read as prose.
    pub fn in_file(text: &'a str, lines: Lines<'a>) -> Self {
        Site {
            text,
            role: Role::Text,
            path: &[],
            lines: Some(lines),
            instructs_agent: false,
            secret_key: false,
            client_secret: false,
        }
    }

    /// The RFC 6901 pointer of the string, or for a stretch of a file
    /// the pointer of its first line.
    pub fn pointer(&self) -> String {
        match &self.lines {
            Some(l) => l.pointer(l.locate(l.offset).0),
            None => pointer(self.path),
        }
    }

    /// True for the description or title of a parameter (a property of
    /// a schema, a Matimo parameter, a prompt variable): text that tells
    /// the model what to put in it.
    pub fn is_parameter_text(&self) -> bool {
        let n = self.path.len();
        let key = |i: usize| match self.path.get(i) {
            Some(Seg::Key(k)) => Some(*k),
            _ => None,
        };
        n >= 3
            && matches!(key(n - 1), Some("description" | "title"))
            && (key(n - 3) == Some("properties")
                || (n == 3 && key(0) == Some("parameters"))
                || (n == 4 && key(1) == Some("variables")))
    }

    /// Report a finding in this string at chars `start..end`, unless a cap
    /// on findings is reached (checked first: building one costs a pointer
    /// and an excerpt).
    #[allow(clippy::too_many_arguments)]
    pub fn report(
        &self,
        out: &mut Findings,
        rule: Rule,
        severity: Severity,
        start: usize,
        end: usize,
        message: String,
        redact: bool,
    ) {
        match out.take(rule, severity) {
            Take::Drop => {}
            Take::Count => out.count(rule, severity),
            Take::Keep => {
                let finding = match &self.lines {
                    None => Finding {
                        rule,
                        severity,
                        pointer: self.pointer(),
                        start,
                        end,
                        excerpt: super::text::excerpt(self.text, start, end, redact),
                        message,
                    },
                    Some(l) => {
                        // Offsets in the line the hit starts on; a hit
                        // running past that line ends at its end.
                        let byte = |c: usize| {
                            self.text
                                .char_indices()
                                .nth(c)
                                .map_or(self.text.len(), |(b, _)| b)
                        };
                        let (b_start, b_end) = (l.offset + byte(start), l.offset + byte(end));
                        let (number, col, line) = l.locate(b_start);
                        let line_chars = line.chars().count();
                        let len = l.whole[b_start..b_end.max(b_start)].chars().count();
                        let end_col = (col + len).min(line_chars).max(col);
                        Finding {
                            rule,
                            severity,
                            pointer: l.pointer(number),
                            start: col,
                            end: end_col,
                            excerpt: super::text::excerpt(line, col, end_col, redact),
                            message,
                        }
                    }
                };
                out.push(finding)
            }
        }
    }
}

/// RFC 6901: `/`-joined segments, `~` as `~0` and `/` as `~1`.
pub(crate) fn pointer(path: &[Seg<'_>]) -> String {
    let mut out = String::new();
    for seg in path {
        out.push('/');
        match seg {
            Seg::Key(k) => {
                for c in k.chars() {
                    match c {
                        '~' => out.push_str("~0"),
                        '/' => out.push_str("~1"),
                        c => out.push(c),
                    }
                }
            }
            Seg::Index(i) => out.push_str(&i.to_string()),
        }
    }
    out
}

/// Walk the definition document.
pub(crate) fn walk_document(ctx: &Context, doc: &Value, out: &mut Findings) {
    let mut w = Walker {
        ctx,
        manifest: false,
        path: Vec::new(),
    };
    w.value(doc, out);
}

/// Walk `toolreg.toml` under the pointer prefix `/toolreg.toml`.
pub(crate) fn walk_manifest(ctx: &Context, table: &toml::Table, out: &mut Findings) {
    let Ok(doc) = serde_json::to_value(table) else {
        return;
    };
    let mut w = Walker {
        ctx,
        manifest: true,
        path: vec![Seg::Key(crate::manifest::FILE_NAME)],
    };
    w.value(&doc, out);
}

struct Walker<'c, 'a> {
    ctx: &'c Context,
    manifest: bool,
    path: Vec<Seg<'a>>,
}

impl<'a> Walker<'_, 'a> {
    fn value(&mut self, v: &'a Value, out: &mut Findings) {
        match v {
            Value::String(s) => {
                let role = self.value_role();
                let (secret_key, client_secret) = self.secret_context();
                self.visit(s, role, secret_key, client_secret, out);
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.path.push(Seg::Index(i));
                    self.value(item, out);
                    self.path.pop();
                }
            }
            Value::Object(map) => {
                let key_role = self.key_role();
                for (k, child) in map {
                    self.path.push(Seg::Key(k));
                    self.visit(k, key_role, false, false, out);
                    self.value(child, out);
                    self.path.pop();
                }
            }
            _ => {}
        }
    }

    fn visit(
        &self,
        s: &str,
        role: Role,
        secret_key: bool,
        client_secret: bool,
        out: &mut Findings,
    ) {
        out.begin_string();
        let site = Site {
            text: s,
            role,
            path: &self.path,
            lines: None,
            instructs_agent: false,
            secret_key,
            client_secret,
        };
        unicode::check(&site, out);
        // A string holding a credential is reported once, as S1: other
        // findings would repeat the secret in their excerpts.
        if !secrets::check(&site, out) {
            prose::check(self.ctx, &site, out);
        }
    }

    /// The last `n`-th key of the path (0 = the last segment), if a key.
    fn key_at(&self, back: usize) -> Option<&'a str> {
        let i = self.path.len().checked_sub(back + 1)?;
        match self.path[i] {
            Seg::Key(k) => Some(k),
            Seg::Index(_) => None,
        }
    }

    /// The role of the keys of the object at the current path.
    fn key_role(&self) -> Role {
        if self.manifest {
            return Role::Key;
        }
        match self.key_at(0) {
            Some("properties") => Role::PropertyName,
            Some("parameters")
                if self.path.len() == 1 && self.ctx.format == Some(Format::Matimo) =>
            {
                Role::PropertyName
            }
            _ => Role::Key,
        }
    }

    /// The role of the string value at the current path.
    fn value_role(&self) -> Role {
        if self.manifest {
            return Role::Text;
        }
        let top = match (self.path.len(), self.key_at(0)) {
            (1, Some(k)) => Some(k),
            _ => None,
        };
        match (self.ctx.format, top) {
            (Some(Format::Mcp | Format::Matimo), Some("name")) => return Role::CallName,
            (Some(Format::Shinkai), Some("id")) => return Role::CallName,
            _ => {}
        }
        if let Some(Seg::Index(_)) = self.path.last() {
            return match self.key_at(1) {
                Some("enum" | "allowed_values") => Role::EnumValue,
                Some("required") => Role::Key,
                _ => Role::Text,
            };
        }
        // Prompt variables: /metadata/variables/N/name.
        if self.ctx.format == Some(Format::Prompt)
            && self.path.len() == 4
            && self.key_at(0) == Some("name")
            && self.key_at(2) == Some("variables")
            && self.key_at(3) == Some("metadata")
        {
            return Role::PropertyName;
        }
        Role::Text
    }

    /// Whether the string value at the current path sits under a
    /// secret-like key, and whether under a client-secret key.
    fn secret_context(&self) -> (bool, bool) {
        let Some(last) = self.path.last() else {
            return (false, false);
        };
        let (own, property) = match last {
            Seg::Key(k) => (Some(*k), self.key_at(1)),
            // An item of `examples`/`enum`: the property is two keys up.
            Seg::Index(_) => (self.key_at(1), self.key_at(2)),
        };
        let Some(own) = own else {
            return (false, false);
        };
        if secrets::is_client_secret_key(own) {
            return (true, true);
        }
        if secrets::is_secret_key(own) {
            return (true, false);
        }
        let value_of_property = matches!(
            own,
            "default" | "example" | "examples" | "const" | "enum" | "value"
        );
        (
            value_of_property && property.is_some_and(secrets::is_secret_key),
            false,
        )
    }
}
