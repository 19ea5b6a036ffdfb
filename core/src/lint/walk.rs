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

/// One string as the rules see it.
pub(crate) struct Site<'a> {
    pub text: &'a str,
    pub role: Role,
    path: &'a [Seg<'a>],
    /// The value sits under a secret-like key (`api_key`, `password`,
    /// `Authorization`, or it is the default/example of such a property).
    pub secret_key: bool,
    /// The value sits under a client-secret key: any value that is not a
    /// placeholder is a secret.
    pub client_secret: bool,
}

impl Site<'_> {
    /// The RFC 6901 pointer of the string.
    pub fn pointer(&self) -> String {
        pointer(self.path)
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
            Take::Keep => out.push(Finding {
                rule,
                severity,
                pointer: self.pointer(),
                start,
                end,
                excerpt: super::text::excerpt(self.text, start, end, redact),
                message,
            }),
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
