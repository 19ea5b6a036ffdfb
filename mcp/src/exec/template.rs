//! Filling a definition's `{name}` placeholders for one call, the way Matimo
//! defines them: a placeholder naming a declared parameter takes that
//! argument; an UPPER_CASE placeholder naming no parameter
//! (`Bearer {GITHUB_TOKEN}`) is read from the serving process's environment,
//! and a missing variable refuses the call before anything is sent or run.
//! A parameter the caller left out stays as written, except where a whole
//! value is that one placeholder: then the value (a header, a body key, an
//! argv element, a query parameter) is left out.

use serde_json::{Map, Value};
use toolreg_core::validate::{is_env_placeholder, single_brace_spans};

use super::Refusal;

/// Reads an environment variable (the process's, or a test's).
pub type EnvLookup = dyn Fn(&str) -> Option<String> + Send + Sync;

/// What placeholders are filled from during one call.
pub struct Fill<'a> {
    /// The call's arguments (already validated against the input schema).
    pub args: &'a Map<String, Value>,
    /// The tool's declared parameter names.
    pub params: &'a [String],
    /// Where environment placeholders are read.
    pub env: &'a EnvLookup,
}

/// A string that is exactly one placeholder of a declared parameter.
pub enum Whole<'a> {
    /// The caller gave it: its value.
    Given(&'a Value),
    /// The caller left it out.
    Absent,
}

impl<'a> Fill<'a> {
    fn is_param(&self, name: &str) -> bool {
        self.params.iter().any(|p| p == name)
    }

    /// `Some` when `text` is exactly `{param}` for a declared parameter.
    pub fn whole(&self, text: &str) -> Option<Whole<'a>> {
        let (range, name) = single_brace_spans(text).next()?;
        if range != (0..text.len()) || !self.is_param(name) {
            return None;
        }
        Some(match self.args.get(name) {
            Some(v) => Whole::Given(v),
            None => Whole::Absent,
        })
    }

    /// `text` with every placeholder filled: arguments as text (strings as
    /// they are, other values as JSON), environment variables as read, each
    /// passed through `encode`. A left-out parameter stays as written.
    pub fn text(&self, text: &str, encode: impl Fn(&str) -> String) -> Result<String, Refusal> {
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (range, name) in single_brace_spans(text) {
            out.push_str(&text[at..range.start]);
            at = range.end;
            if self.is_param(name) {
                match self.args.get(name) {
                    Some(v) => out.push_str(&encode(&as_text(v))),
                    None => out.push_str(&text[range]),
                }
            } else if is_env_placeholder(name) {
                let value = (self.env)(name).ok_or_else(|| Refusal::missing_env(name))?;
                out.push_str(&encode(&value));
            } else {
                out.push_str(&text[range]);
            }
        }
        out.push_str(&text[at..]);
        Ok(out)
    }

    /// The declared parameters named by placeholders in `text`.
    pub fn params_in<'t>(&self, text: &'t str) -> Vec<&'t str> {
        single_brace_spans(text)
            .map(|(_, name)| name)
            .filter(|n| self.is_param(n))
            .collect()
    }

    /// A JSON value with every string filled (recursively): a string that
    /// is exactly one given parameter becomes that argument's JSON value,
    /// one that is exactly a left-out parameter is dropped (from its object
    /// or array), and other strings are filled as [`Fill::text`].
    pub fn json(&self, value: &Value) -> Result<Option<Value>, Refusal> {
        Ok(match value {
            Value::String(s) => match self.whole(s) {
                Some(Whole::Given(v)) => Some(v.clone()),
                Some(Whole::Absent) => None,
                None => Some(Value::String(self.text(s, str::to_string)?)),
            },
            Value::Object(map) => {
                let mut out = Map::new();
                for (k, v) in map {
                    if let Some(v) = self.json(v)? {
                        out.insert(k.clone(), v);
                    }
                }
                Some(Value::Object(out))
            }
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for v in items {
                    if let Some(v) = self.json(v)? {
                        out.push(v);
                    }
                }
                Some(Value::Array(out))
            }
            other => Some(other.clone()),
        })
    }
}

/// An argument as text: a string as it is, anything else as JSON.
pub fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The parameter names a tool declares (its input schema's `properties`).
pub fn declared_params(schema: &Value) -> Vec<String> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_string())
    }

    fn with<R>(args: Value, f: impl FnOnce(&Fill) -> R) -> R {
        let args = args.as_object().cloned().unwrap_or_default();
        let params = vec!["owner".to_string(), "labels".to_string(), "n".to_string()];
        let fill = Fill {
            args: &args,
            params: &params,
            env: &env,
        };
        f(&fill)
    }

    #[test]
    fn fills_parameters_and_environment() {
        with(json!({"owner": "a b", "n": 3}), |f| {
            assert_eq!(
                f.text("x/{owner}/{n}/{TOKEN}", |s| s.replace(' ', "%20"))
                    .unwrap(),
                "x/a%20b/3/s3cret"
            );
            // a left-out parameter stays as written; unknown lowercase too
            assert_eq!(
                f.text("{labels}-{other}", str::to_string).unwrap(),
                "{labels}-{other}"
            );
            let err = f
                .text("Bearer {MISSING_TOKEN}", str::to_string)
                .unwrap_err();
            assert!(err.message.contains("MISSING_TOKEN"), "{}", err.message);
        });
    }

    #[test]
    fn whole_placeholders_keep_json_values_and_drop_left_out_keys() {
        with(json!({"labels": ["a", "b"], "n": 2}), |f| {
            let body = json!({"labels": "{labels}", "n": "{n}", "owner": "{owner}", "t": "n={n}", "k": [ "{owner}", 1 ]});
            assert_eq!(
                f.json(&body).unwrap().unwrap(),
                json!({"labels": ["a", "b"], "n": 2, "t": "n=2", "k": [1]})
            );
        });
    }
}
