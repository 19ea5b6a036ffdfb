//! Encoding answers: JSON bytes as they are sent and cached, and stored
//! times as RFC 3339 text. Used by the models that keep encoded answers
//! (`models::tool_summary`) and by the controllers alike.

use bytes::Bytes;
use chrono::{NaiveDateTime, SecondsFormat};

use crate::error::{internal, AppResult};

/// RFC 3339 UTC text of a stored time.
pub fn rfc3339(t: &NaiveDateTime) -> String {
    t.and_utc().to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// `value` as a JSON body, for the cache and the response alike.
pub fn to_json<T: serde::Serialize>(value: &T) -> AppResult<Bytes> {
    let mut body = serde_json::to_vec(value)
        .map_err(|e| internal(format!("cannot encode the answer: {e}")))?;
    // Answers are kept in the read cache, which weighs them by length: no
    // spare capacity from the buffer's doubling may hide behind that.
    body.shrink_to_fit();
    Ok(Bytes::from(body))
}
