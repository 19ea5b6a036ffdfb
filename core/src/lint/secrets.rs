//! Rule `S1`: live credentials anywhere in a definition.
//!
//! The rule table is here, in one place: the secret scanners published as
//! crates either need a newer compiler than this workspace builds with or
//! are one-maintainer projects too young to depend on, so the token
//! formats are written out below. A string is a credential when
//!
//! * it holds a token with a known prefix: AWS access key ids, GitHub
//!   tokens, OpenAI, Anthropic, Slack (tokens and webhook URLs), Stripe and
//!   Google (API keys, OAuth client secrets and access tokens) — and the
//!   token's random part looks random;
//! * it holds a PEM private key block or a JWT;
//! * it sits under a secret-like key (`api_key`, `password`, `token`,
//!   `Authorization`, ...; or is the default or example of such a
//!   property) and is a high-entropy value; or it sits under a client
//!   secret key and is not empty.
//!
//! Placeholders are never credentials: `YOUR_API_KEY`, `${VAR}`, `$VAR`,
//! `{{var}}`, `{VAR}`, `<token>`, `xxx…`, `***`, and values that say
//! `example`, `placeholder`, `dummy` or `redacted`.

use regex::bytes::{Regex, RegexSet};

use super::automata::Compiled;
use super::collect::Findings;
use super::text::{char_index, entropy};
use super::walk::Site;
use super::{Rule, Severity};

/// One credential format: what it is, and the pattern of the token. The
/// `secret` capture group, when present, is the random part whose entropy
/// is checked.
struct Format {
    what: &'static str,
    pattern: &'static str,
}

const FORMATS: &[Format] = &[
    Format {
        what: "an AWS access key id",
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA)(?P<secret>[0-9A-Z]{16})\b",
    },
    Format {
        what: "a GitHub token",
        pattern: r"\bgh[pousr]_(?P<secret>[A-Za-z0-9]{36,255})\b",
    },
    Format {
        what: "a GitHub fine-grained token",
        pattern: r"\bgithub_pat_(?P<secret>[A-Za-z0-9_]{50,255})\b",
    },
    Format {
        what: "an Anthropic API key",
        pattern: r"\bsk-ant-[a-z0-9]{2,12}-(?P<secret>[A-Za-z0-9_-]{32,})",
    },
    Format {
        what: "an OpenAI API key",
        pattern: r"\bsk-(?:(?:proj|svcacct|admin)-)?(?P<secret>[A-Za-z0-9_-]{32,})",
    },
    Format {
        what: "a Slack token",
        pattern: r"\bxox[abposr]-(?P<secret>[0-9A-Za-z-]{20,})",
    },
    Format {
        what: "a Slack app token",
        pattern: r"\bxapp-\d-(?P<secret>[A-Z0-9]{8,}-\d{6,}-[a-z0-9]{32,})",
    },
    Format {
        what: "a Slack webhook URL",
        pattern: r"hooks\.slack\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/(?P<secret>[A-Za-z0-9]{20,})",
    },
    Format {
        what: "a Stripe secret key",
        pattern: r"\b(?:sk|rk)_(?:live|test)_(?P<secret>[0-9A-Za-z]{20,})",
    },
    Format {
        what: "a Google API key",
        pattern: r"\bAIza(?P<secret>[0-9A-Za-z_-]{35})",
    },
    Format {
        what: "a Google OAuth client secret",
        pattern: r"\bGOCSPX-(?P<secret>[0-9A-Za-z_-]{28})",
    },
    Format {
        what: "a Google OAuth access token",
        pattern: r"\bya29\.(?P<secret>[0-9A-Za-z_-]{30,})",
    },
    Format {
        what: "a PEM private key",
        pattern: r"-----BEGIN (?:(?:RSA|EC|DSA|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY(?: BLOCK)?-----",
    },
    Format {
        what: "a JSON Web Token",
        pattern: r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.(?P<secret>[A-Za-z0-9_-]{16,})",
    },
];

static SET: Compiled<RegexSet> = Compiled::new(|| {
    RegexSet::new(FORMATS.iter().map(|f| format!("(?-u){}", f.pattern)))
        .expect("the S1 patterns are valid")
});

static REGEXES: Compiled<Vec<Regex>> = Compiled::new(|| {
    FORMATS
        .iter()
        .map(|f| Regex::new(&format!("(?-u){}", f.pattern)).expect("the S1 patterns are valid"))
        .collect()
});

/// Placeholder constructs: `${VAR}`, `$VAR`, `{{var}}`, `{VAR}`, `<token>`,
/// runs of `x`, `*`, `.` or `0`, and words that say "not a real value".
static PLACEHOLDER: Compiled<Regex> = Compiled::new(|| {
    Regex::new(
        r"(?ix-u)
        \$\{[^}]{1,80}\}
        | \$[A-Z_][A-Z0-9_]{1,80}
        | \{\{[^}]{1,80}\}\}
        | \{[A-Za-z_][A-Za-z0-9_.-]{0,80}\}
        | <[A-Za-z_][A-Za-z0-9_ .-]{0,80}>
        | x{4,} | \*{3,} | \.\.\. | \xE2\x80\xA6 | 0{8,}
        | your[_ -]? | example | placeholder | dummy | redacted | changeme | replace[_ -]?me
        | insert[_ -] | <secret> | sample
        ",
    )
    .expect("the placeholder pattern is valid")
});

/// Secret-like key names (matched on the key lowercased, without `_`,
/// `-`, `.` and spaces).
const SECRET_KEYS: &[&str] = &[
    "secret",
    "password",
    "passwd",
    "passphrase",
    "apikey",
    "accesskey",
    "privatekey",
    "token",
    "credential",
    "authorization",
    "bearer",
    "sessionkey",
    "signingkey",
];

fn squash(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// True for keys that name a secret (`api_key`, `X-Api-Key`, `password`,
/// `Authorization`, `access_token`, ...).
pub(crate) fn is_secret_key(key: &str) -> bool {
    if key.len() > 64 {
        return false;
    }
    let k = squash(key);
    // Names of things about tokens, not tokens: `tokenUrl`, `max_tokens`,
    // `token_type`.
    if k.ends_with("url") || k.ends_with("tokens") || k.ends_with("type") || k.ends_with("name") {
        return false;
    }
    SECRET_KEYS.iter().any(|s| k.contains(s))
}

/// True for OAuth client secret keys (`clientSecret`, `client_secret`).
pub(crate) fn is_client_secret_key(key: &str) -> bool {
    key.len() < 32 && squash(key) == "clientsecret"
}

/// True if `s` is (or holds) a placeholder rather than a value.
pub fn is_placeholder(s: &str) -> bool {
    PLACEHOLDER.get().is_match(s.as_bytes())
}

/// A credential with a known format found in a text: its byte range and
/// what it is.
pub(crate) struct Token {
    pub start: usize,
    pub end: usize,
    pub what: &'static str,
}

/// Every credential of a known format in `text` (placeholders and
/// non-random values left out).
pub(crate) fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    if text.len() < 16 {
        return out;
    }
    let regexes = REGEXES.get();
    for idx in SET.get().matches(text.as_bytes()).iter() {
        for caps in regexes[idx].captures_iter(text.as_bytes()) {
            let Some(whole) = caps.get(0) else { continue };
            let hit = String::from_utf8_lossy(whole.as_bytes());
            let random = caps
                .name("secret")
                .map_or(hit.clone(), |m| String::from_utf8_lossy(m.as_bytes()));
            if is_placeholder(&hit) || (caps.name("secret").is_some() && !looks_random(&random)) {
                continue;
            }
            out.push(Token {
                start: whole.start(),
                end: whole.end(),
                what: FORMATS[idx].what,
            });
        }
    }
    out
}

/// Run `S1` on one string; true if it holds a credential.
pub(crate) fn check(site: &Site<'_>, out: &mut Findings) -> bool {
    let s = site.text;
    let mut found = false;
    for t in tokens(s) {
        found = true;
        site.report(
            out,
            Rule::S1,
            Severity::Block,
            char_index(s, t.start),
            char_index(s, t.end),
            format!("{} is published in the definition", t.what),
            true,
        );
    }
    if found || !site.secret_key {
        return found;
    }
    // A value under a secret-like key: `Bearer <token>` or the value itself.
    let trimmed = s.trim();
    let value = ["Bearer ", "bearer ", "Basic ", "Token ", "token "]
        .iter()
        .find_map(|p| trimmed.strip_prefix(p))
        .unwrap_or(trimmed);
    if value.is_empty() || is_placeholder(value) {
        return false;
    }
    let secret = if site.client_secret {
        true
    } else {
        !value.contains(char::is_whitespace)
            && !value.contains("://")
            && value.chars().count() >= 16
            && looks_random(value)
    };
    if secret {
        let offset = s.find(value).unwrap_or(0);
        let start = char_index(s, offset);
        let what = if site.client_secret {
            "an OAuth client secret"
        } else {
            "a high-entropy value under a secret-like key"
        };
        site.report(
            out,
            Rule::S1,
            Severity::Block,
            start,
            start + value.chars().count(),
            format!("{what} is published in the definition"),
            true,
        );
    }
    secret
}

/// Random-looking: letters and digits mixed, and at least 3 bits of
/// entropy per character (`ghp_aaaa…`, `1234…` are not).
fn looks_random(s: &str) -> bool {
    let has_digit = s.bytes().any(|b| b.is_ascii_digit());
    let has_alpha = s.bytes().any(|b| b.is_ascii_alphabetic());
    has_digit && has_alpha && entropy(s) >= 3.0
}
