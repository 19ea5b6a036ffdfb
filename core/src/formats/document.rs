//! Reading a definition document — JSON, or Matimo's YAML — into its JSON
//! value, and finding what would make two readers of the same file see
//! different text: a key written twice in one object (a parser keeps one
//! value, but the file as served holds both, so the lint would judge text
//! an agent may never get, and miss text it does), and YAML merge keys
//! (`<<`, whose overridden values stay in the file).
//!
//! The value is built in the same pass that finds them (the later value of
//! a repeated key wins, as in `serde_json`), so a stored document still
//! reads; [`load`](super::load) refuses a definition that has any, naming
//! each one's JSON pointer.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::error::Problem;
use crate::lint::walk::{pointer, Seg};

/// A document read into its JSON value, with the keys it repeats.
#[derive(Debug, Clone)]
pub struct Document {
    /// The document's JSON value (the last value of a repeated key).
    pub value: Value,
    /// One problem per repeated key or merge key, at its JSON pointer.
    pub key_problems: Vec<Problem>,
}

/// At most this many repeated keys are named; more are counted.
const MAX_NAMED: usize = 20;

/// Read JSON text; `Err` is the parser's message.
pub fn json(text: &str) -> Result<Document, String> {
    let mut state = State::default();
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Seed(&mut state)
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| e.to_string())?;
    Ok(state.finish(value))
}

/// Read YAML text under `options`, which must forward repeated keys and
/// merge keys to the reader (`DuplicateKeyPolicy::PassThrough`,
/// `MergeKeyPolicy::AsOrdinary`); `Err` is the parser's message.
pub fn yaml(text: &str, options: serde_saphyr::Options) -> Result<Document, String> {
    let mut state = State::default();
    let value = serde_saphyr::with_deserializer_from_str_with_options(text, options, |de| {
        Seed(&mut state).deserialize(de)
    })
    .map_err(|e| e.to_string())?;
    Ok(state.finish(value))
}

/// Where the reader is, and what it found.
#[derive(Default)]
struct State {
    path: Vec<Owned>,
    repeated: Vec<Problem>,
    more: usize,
}

enum Owned {
    Key(String),
    Index(usize),
}

impl State {
    fn pointer(&self) -> String {
        let segs: Vec<Seg<'_>> = self
            .path
            .iter()
            .map(|s| match s {
                Owned::Key(k) => Seg::Key(k),
                Owned::Index(i) => Seg::Index(*i),
            })
            .collect();
        pointer(&segs)
    }

    fn report(&mut self, problem: impl FnOnce(String) -> Problem) {
        if self.repeated.len() < MAX_NAMED {
            let at = self.pointer();
            self.repeated.push(problem(at));
        } else {
            self.more += 1;
        }
    }

    fn finish(mut self, value: Value) -> Document {
        if self.more > 0 {
            self.repeated.push(Problem::new(
                "",
                format!("and {} more repeated keys", self.more),
            ));
        }
        Document {
            value,
            key_problems: self.repeated,
        }
    }
}

struct Seed<'s>(&'s mut State);

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Seed(self.0).deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        loop {
            self.0.path.push(Owned::Index(items.len()));
            let item = seq.next_element_seed(Seed(&mut *self.0));
            self.0.path.pop();
            match item? {
                Some(v) => items.push(v),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            self.0.path.push(Owned::Key(key));
            if out.contains_key(self.0.path_key()) {
                let k = self.0.path_key().to_string();
                self.0.report(|at| {
                    Problem::new(
                        at,
                        format!("the key `{k}` appears more than once in one object; a reader keeps only one of its values"),
                    )
                    .with_fix("write each key once")
                });
            } else if self.0.path_key() == "<<" {
                self.0.report(|at| {
                    Problem::new(at, "a YAML merge key (`<<`) copies values the file then overrides; the overridden text stays in the file")
                        .with_fix("write the keys out instead of merging them")
                });
            }
            let value = map.next_value_seed(Seed(&mut *self.0));
            let key = match self.0.path.pop() {
                Some(Owned::Key(key)) => key,
                _ => String::new(),
            };
            out.insert(key, value?);
        }
        Ok(Value::Object(out))
    }
}

impl State {
    /// The key at the end of the path (pushed by `visit_map`).
    fn path_key(&self) -> &str {
        match self.path.last() {
            Some(Owned::Key(k)) => k,
            _ => "",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_are_named_by_pointer_at_any_depth() {
        let doc = json(r#"{"a": 1, "b": {"c/d": [{"x": 1, "x": 2}], "c/d": 3}, "a": 4}"#).unwrap();
        let at: Vec<&str> = doc.key_problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(at, ["/b/c~1d/0/x", "/b/c~1d", "/a"]);
        assert_eq!(doc.value["a"], 4, "the later value wins, as in serde_json");
        assert!(json(r#"{"a": 1, "b": [1, {"a": 2}]}"#)
            .unwrap()
            .key_problems
            .is_empty());
        assert!(json("{\"a\": 1,}").is_err());
        assert!(json("{} x").is_err());
    }
}
