//! The hit-record side of a segment's table ([`Records`]): the fields a hit
//! shows, one compact binary record per document (length-prefixed strings,
//! enums as one byte), decoded from the segment's stored documents once. A
//! page then decodes a few short records instead of decompressing doc-store
//! blocks and parsing JSON documents. A description longer than
//! [`INLINE_DESCRIPTION`] bytes is not copied: that hit is read from the doc
//! store, which bounds the records' size.

use std::path::Path;

use chrono::{DateTime, Utc};
use tantivy::schema::Value;
use tantivy::store::StoreReader;
use tantivy::{DocId, SegmentReader, TantivyDocument};
use toolreg_core::{ExecutionKind, Format, Tier};

use super::store_file;
use crate::schema::Fields;
use crate::{SearchDoc, SearchError};

/// Longest description (in bytes) copied into a hit record; longer ones are
/// read from the doc store when shown.
pub(crate) const INLINE_DESCRIPTION: usize = 512;

/// The hit records of one segment: record `d` is
/// `bytes[starts[d]..starts[d + 1]]`.
pub(crate) struct Records {
    bytes: Vec<u8>,
    starts: Vec<u32>,
}

/// Flags of a record.
const HAS_TITLE: u8 = 1;
const HAS_LICENSE: u8 = 2;
const BLOCKED: u8 = 4;
const HAS_BLOCKED_REASON: u8 = 8;
/// The description is in the record (else: read it from the doc store).
const INLINE: u8 = 16;
/// The version carries CI provenance (trusted publishing).
const PROVENANCE: u8 = 32;
/// The record holds the definition fingerprint.
const HAS_FINGERPRINT: u8 = 64;
/// The version is deprecated: the record holds the message, the successor
/// and the requirement (empty strings for none: neither is ever empty).
const DEPRECATED: u8 = 128;

impl Records {
    pub(crate) fn build(
        segment: &SegmentReader,
        fields: &Fields,
        dir: Option<&Path>,
    ) -> Result<Self, SearchError> {
        let store: StoreReader = store_file::open_for_pass(segment, dir)?;
        let max_doc = segment.max_doc() as usize;
        let mut bytes = Vec::new();
        let mut starts = Vec::with_capacity(max_doc + 1);
        for doc in store.iter::<TantivyDocument>(None) {
            starts.push(offset(bytes.len())?);
            let doc = doc?;
            let json = doc
                .get_first(fields.stored)
                .and_then(|v| v.as_str())
                .ok_or_else(|| SearchError::Corrupt("a document without its stored form".into()))?;
            let doc: SearchDoc =
                serde_json::from_str(json).map_err(|e| SearchError::Corrupt(e.to_string()))?;
            encode(&doc, &mut bytes);
        }
        starts.push(offset(bytes.len())?);
        if starts.len() != max_doc + 1 {
            return Err(SearchError::Corrupt(format!(
                "the doc store has {} documents, the segment {max_doc}",
                starts.len() - 1
            )));
        }
        bytes.shrink_to_fit();
        Ok(Records { bytes, starts })
    }

    fn record(&self, doc: DocId) -> Result<&[u8], SearchError> {
        let d = doc as usize;
        match (self.starts.get(d), self.starts.get(d + 1)) {
            (Some(&s), Some(&e)) => self
                .bytes
                .get(s as usize..e as usize)
                .ok_or_else(|| SearchError::Corrupt("a hit record out of range".into())),
            _ => Err(SearchError::Corrupt(format!("no hit record for doc {doc}"))),
        }
    }

    /// The registry name of `doc`.
    pub(crate) fn name(&self, doc: DocId) -> Result<&str, SearchError> {
        let mut r = Reader(self.record(doc)?);
        r.byte()?;
        r.str()
    }

    /// The document of `doc` without its notes; `None` when its description
    /// is not in the record (read the doc store).
    pub(crate) fn doc(&self, doc: DocId) -> Result<Option<SearchDoc>, SearchError> {
        let mut r = Reader(self.record(doc)?);
        let flags = r.byte()?;
        if flags & INLINE == 0 {
            return Ok(None);
        }
        let name = r.str()?.to_string();
        let format = *Format::ALL
            .get(usize::from(r.byte()?))
            .ok_or_else(|| bad("format"))?;
        let execution = *ExecutionKind::ALL
            .get(usize::from(r.byte()?))
            .ok_or_else(|| bad("execution"))?;
        let tier = *Tier::ALL
            .get(usize::from(r.byte()?))
            .ok_or_else(|| bad("tier"))?;
        let downloads = r.varint()?;
        let secs = r.varint()? as i64;
        let nanos = u32::try_from(r.varint()?).map_err(|_| bad("time"))?;
        let updated_at = DateTime::<Utc>::from_timestamp(secs, nanos).ok_or_else(|| bad("time"))?;
        let version = r.str()?.to_string();
        let definition_sha256 = if flags & HAS_FINGERPRINT != 0 {
            Some(r.str()?.to_string())
        } else {
            None
        };
        let title = if flags & HAS_TITLE != 0 {
            Some(r.str()?.to_string())
        } else {
            None
        };
        let description = r.str()?.to_string();
        let n = r.varint()? as usize;
        let mut keywords = Vec::with_capacity(n.min(64));
        for _ in 0..n {
            keywords.push(r.str()?.to_string());
        }
        let license = if flags & HAS_LICENSE != 0 {
            Some(r.str()?.to_string())
        } else {
            None
        };
        let blocked_reason = if flags & HAS_BLOCKED_REASON != 0 {
            Some(r.str()?.to_string())
        } else {
            None
        };
        let findings = u32::try_from(r.varint()?).map_err(|_| bad("findings count"))?;
        let deprecated = if flags & DEPRECATED != 0 {
            let message = r.str()?.to_string();
            let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
            let successor = some(r.str()?);
            let req = some(r.str()?);
            Some(toolreg_api::EncodableDeprecation {
                message,
                successor,
                req,
            })
        } else {
            None
        };
        Ok(Some(SearchDoc {
            name,
            version,
            definition_sha256,
            title,
            description,
            notes: String::new(),
            keywords,
            license,
            format,
            execution,
            tier,
            downloads,
            updated_at,
            blocked: flags & BLOCKED != 0,
            blocked_reason,
            deprecated,
            findings,
            provenance: flags & PROVENANCE != 0,
        }))
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.starts.capacity() * 4
    }
}

fn bad(what: &str) -> SearchError {
    SearchError::Corrupt(format!("a hit record with a bad {what}"))
}

fn offset(n: usize) -> Result<u32, SearchError> {
    u32::try_from(n).map_err(|_| SearchError::Corrupt("hit records over 4 GiB".into()))
}

fn index_of<T: PartialEq>(all: &[T], x: &T) -> u8 {
    all.iter().position(|y| y == x).unwrap_or(0) as u8
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// Flags, name, format, execution, tier, downloads, seconds, nanoseconds,
/// version, [definition fingerprint], [title], description, keyword count
/// and keywords, [license], [blocked reason], findings count, [deprecation
/// message, successor, requirement]. A record
/// without its description (too long) is the flags and the name only.
fn encode(doc: &SearchDoc, out: &mut Vec<u8>) {
    let inline = doc.description.len() <= INLINE_DESCRIPTION;
    let mut flags = 0;
    for (on, flag) in [
        (doc.title.is_some(), HAS_TITLE),
        (doc.license.is_some(), HAS_LICENSE),
        (doc.blocked, BLOCKED),
        (doc.blocked_reason.is_some(), HAS_BLOCKED_REASON),
        (doc.provenance, PROVENANCE),
        (inline, INLINE),
        (doc.definition_sha256.is_some(), HAS_FINGERPRINT),
        (doc.deprecated.is_some(), DEPRECATED),
    ] {
        if on {
            flags |= flag;
        }
    }
    out.push(flags);
    put_str(out, &doc.name);
    if !inline {
        return;
    }
    out.push(index_of(&Format::ALL, &doc.format));
    out.push(index_of(&ExecutionKind::ALL, &doc.execution));
    out.push(index_of(&Tier::ALL, &doc.tier));
    put_varint(out, doc.downloads);
    put_varint(out, doc.updated_at.timestamp() as u64);
    put_varint(out, u64::from(doc.updated_at.timestamp_subsec_nanos()));
    put_str(out, &doc.version);
    if let Some(fingerprint) = &doc.definition_sha256 {
        put_str(out, fingerprint);
    }
    if let Some(title) = &doc.title {
        put_str(out, title);
    }
    put_str(out, &doc.description);
    put_varint(out, doc.keywords.len() as u64);
    for k in &doc.keywords {
        put_str(out, k);
    }
    if let Some(license) = &doc.license {
        put_str(out, license);
    }
    if let Some(reason) = &doc.blocked_reason {
        put_str(out, reason);
    }
    put_varint(out, u64::from(doc.findings));
    if let Some(d) = &doc.deprecated {
        put_str(out, &d.message);
        put_str(out, d.successor.as_deref().unwrap_or_default());
        put_str(out, d.req.as_deref().unwrap_or_default());
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8, SearchError> {
        let (&b, rest) = self.0.split_first().ok_or_else(|| bad("length"))?;
        self.0 = rest;
        Ok(b)
    }

    #[inline]
    fn varint(&mut self) -> Result<u64, SearchError> {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
            shift += 7;
            if shift >= 64 {
                return Err(bad("number"));
            }
        }
    }

    fn str(&mut self) -> Result<&'a str, SearchError> {
        let n = self.varint()? as usize;
        if n > self.0.len() {
            return Err(bad("string"));
        }
        let (s, rest) = self.0.split_at(n);
        self.0 = rest;
        std::str::from_utf8(s).map_err(|_| bad("string"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let mut doc = SearchDoc {
            name: "a-tool".into(),
            version: "1.2.3-beta.1".into(),
            definition_sha256: Some(format!("sha256:{}", "ab".repeat(32))),
            title: Some("A “tool”".into()),
            description: "Does things.".into(),
            notes: String::new(),
            keywords: vec!["One".into(), "two".into()],
            license: Some("MIT OR Apache-2.0".into()),
            format: Format::Prompt,
            execution: ExecutionKind::Schema,
            tier: Tier::Trusted,
            downloads: 300_000_000_000,
            updated_at: DateTime::<Utc>::from_timestamp(1_760_000_123, 456_789_012)
                .unwrap_or_default(),
            blocked: true,
            blocked_reason: Some("malware".into()),
            deprecated: Some(toolreg_api::EncodableDeprecation {
                message: "Use “b-tool”.".into(),
                successor: Some("b-tool".into()),
                req: Some("<2.0.0".into()),
            }),
            findings: 3,
            provenance: true,
        };
        for variant in 0..3 {
            if variant == 1 {
                doc.title = None;
                doc.license = None;
                doc.blocked = false;
                doc.blocked_reason = None;
                doc.deprecated = None;
                doc.definition_sha256 = None;
                doc.keywords.clear();
                doc.findings = 0;
                doc.provenance = false;
            }
            if variant == 2 {
                doc.description = "x".repeat(INLINE_DESCRIPTION + 1);
            }
            let mut bytes = Vec::new();
            encode(&doc, &mut bytes);
            let records = Records {
                starts: vec![0, bytes.len() as u32],
                bytes,
            };
            assert_eq!(records.name(0).ok(), Some("a-tool"));
            let back = records.doc(0).ok().flatten();
            if variant == 2 {
                assert!(back.is_none());
            } else {
                assert_eq!(back.as_ref(), Some(&doc));
            }
            assert!(records.doc(1).is_err());
        }
    }
}
