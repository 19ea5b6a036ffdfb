//! Compact in-memory tables of one index segment, so that a search page is
//! computed without reading a stored document or a string dictionary per
//! match (issue 4, point 6).
//!
//! A [`SegmentTable`] has three parts:
//!
//! * **Facet values** (built when the segment is first seen): for each
//!   facet field (license, keyword, execution, tier) the values and every
//!   document's value ordinals ([`FacetColumn`], read from the fast-field
//!   string columns with the same `term_ords` a per-match lookup would use),
//!   and, for counting, one 64-bit word per document holding the
//!   combination of its single-valued fields and up to three keyword
//!   ordinals (`Combos`): counting a match's facets is one memory read and
//!   a few increments. At 100,000 tools: under 2 MiB.
//! * **Sort columns**: the name ordinals, downloads and update times as
//!   tantivy fast-field columns, opened once instead of once per query.
//! * **Hit records** ([`Records`], built on first use or by
//!   [`super::SearchIndex::warm`]): the fields a hit shows, one compact
//!   binary record per document (length-prefixed strings, enums as one
//!   byte), decoded from the segment's stored documents once. A page then
//!   decodes 20 short records instead of decompressing 20 doc-store blocks
//!   and parsing 20 JSON documents. A description longer than
//!   [`INLINE_DESCRIPTION`] bytes is not copied: that hit is read from the
//!   doc store as before, which bounds the table's size. At 100,000 tools
//!   with the benchmark's ~150-byte descriptions: the rest of the 21.1 MiB
//!   the benchmark reports.
//!
//! Segments are immutable, so a table never goes stale; it is shared by
//! every searcher generation that still has its segment (see
//! [`super::snapshot`]) and dropped when the segment is merged away.
//! [`SegmentTable::heap_bytes`] says what one costs.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use chrono::{DateTime, Utc};
use tantivy::columnar::{Column, StrColumn};
use tantivy::schema::Value;
use tantivy::store::StoreReader;
use tantivy::{DocId, SegmentReader, TantivyDocument};
use toolreg_core::{ExecutionKind, Format, Tier};

use super::schema::Fields;
use super::{SearchDoc, SearchError};

/// The facet fields (fast-field names), in [`super::Facets`] order.
pub(crate) const FACETS: [&str; 4] = ["license", "keyword", "execution", "tier"];

/// Longest description (in bytes) copied into a hit record; longer ones are
/// read from the doc store when shown.
pub(crate) const INLINE_DESCRIPTION: usize = 512;

/// Integers in the narrowest width that holds every value; the largest
/// value of the width means "none".
enum Packed {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
}

impl Packed {
    /// Packs `values` (with `u32::MAX` for none) for ordinals below `num`.
    fn new(values: &[u32], num: usize) -> Self {
        if num < usize::from(u8::MAX) {
            Packed::U8(values.iter().map(|&v| v.min(255) as u8).collect())
        } else if num < usize::from(u16::MAX) {
            Packed::U16(values.iter().map(|&v| v.min(65_535) as u16).collect())
        } else {
            Packed::U32(values.to_vec())
        }
    }

    #[inline]
    fn get(&self, i: usize) -> Option<u32> {
        match self {
            Packed::U8(v) => v.get(i).filter(|&&x| x != u8::MAX).map(|&x| u32::from(x)),
            Packed::U16(v) => v.get(i).filter(|&&x| x != u16::MAX).map(|&x| u32::from(x)),
            Packed::U32(v) => v.get(i).filter(|&&x| x != u32::MAX).copied(),
        }
    }

    fn heap_bytes(&self) -> usize {
        match self {
            Packed::U8(v) => v.capacity(),
            Packed::U16(v) => v.capacity() * 2,
            Packed::U32(v) => v.capacity() * 4,
        }
    }
}

/// Per document, the value ordinal(s) of one facet field.
enum Ords {
    /// No document of the segment has a value.
    Empty,
    /// At most one value per document.
    One(Packed),
    /// Any number: the ordinals of document `d` are
    /// `ords[starts[d]..starts[d + 1]]`.
    Many { starts: Vec<u32>, ords: Packed },
}

/// One facet field of one segment: the values (by ordinal, in the fast
/// field's order) and every document's ordinals.
pub(crate) struct FacetColumn {
    values: Vec<Box<str>>,
    ords: Ords,
}

impl FacetColumn {
    fn build(column: Option<StrColumn>, max_doc: DocId) -> Result<Self, SearchError> {
        let Some(column) = column else {
            return Ok(FacetColumn {
                values: Vec::new(),
                ords: Ords::Empty,
            });
        };
        let mut values = Vec::with_capacity(column.num_terms());
        let mut stream = column.dictionary().stream()?;
        while stream.advance() {
            let value = std::str::from_utf8(stream.key())
                .map_err(|e| SearchError::Corrupt(format!("a facet value: {e}")))?;
            values.push(Box::<str>::from(value));
        }
        let num = values.len();
        let mut first = Vec::with_capacity(max_doc as usize);
        let mut starts = Vec::with_capacity(max_doc as usize + 1);
        let mut all = Vec::new();
        let mut multi = false;
        for doc in 0..max_doc {
            starts.push(all.len() as u32);
            let before = all.len();
            for ord in column.term_ords(doc) {
                let ord = u32::try_from(ord)
                    .ok()
                    .filter(|&o| (o as usize) < num)
                    .ok_or_else(|| SearchError::Corrupt("a facet ordinal out of range".into()))?;
                all.push(ord);
            }
            multi |= all.len() - before > 1;
            first.push(if all.len() > before {
                all[before]
            } else {
                u32::MAX
            });
        }
        starts.push(all.len() as u32);
        let ords = if multi {
            Ords::Many {
                starts,
                ords: Packed::new(&all, num),
            }
        } else {
            Ords::One(Packed::new(&first, num))
        };
        Ok(FacetColumn { values, ords })
    }

    /// How many distinct values the segment has.
    pub(crate) fn num_values(&self) -> usize {
        self.values.len()
    }

    /// The value of ordinal `ord`.
    pub(crate) fn value(&self, ord: usize) -> &str {
        self.values.get(ord).map_or("", |v| v)
    }

    /// The value ordinals of `doc` of a multi-valued field (building only).
    fn doc_ords(&self, doc: usize) -> Vec<u32> {
        match &self.ords {
            Ords::Many { starts, ords } => {
                let (Some(&s), Some(&e)) = (starts.get(doc), starts.get(doc + 1)) else {
                    return Vec::new();
                };
                (s as usize..e as usize)
                    .filter_map(|i| ords.get(i))
                    .collect()
            }
            Ords::One(p) => p.get(doc).into_iter().collect(),
            Ords::Empty => Vec::new(),
        }
    }

    /// Adds one to the count of each value of `doc`.
    #[inline]
    pub(crate) fn count(&self, doc: DocId, counts: &mut [u32]) {
        match &self.ords {
            Ords::Empty => {}
            Ords::One(packed) => {
                if let Some(c) = packed
                    .get(doc as usize)
                    .and_then(|ord| counts.get_mut(ord as usize))
                {
                    *c += 1;
                }
            }
            Ords::Many { starts, ords } => {
                let d = doc as usize;
                let (Some(&start), Some(&end)) = (starts.get(d), starts.get(d + 1)) else {
                    return;
                };
                for i in start as usize..end as usize {
                    if let Some(c) = ords.get(i).and_then(|ord| counts.get_mut(ord as usize)) {
                        *c += 1;
                    }
                }
            }
        }
    }

    fn heap_bytes(&self) -> usize {
        let values: usize = self
            .values
            .iter()
            .map(|v| v.len() + std::mem::size_of::<Box<str>>())
            .sum();
        values
            + match &self.ords {
                Ords::Empty => 0,
                Ords::One(p) => p.heap_bytes(),
                Ords::Many { starts, ords } => starts.capacity() * 4 + ords.heap_bytes(),
            }
    }
}

/// The facet values of each document in as few memory reads as possible.
///
/// The single-valued fields (license, execution, tier) are one
/// *combination code*: a segment has few distinct combinations (at most
/// 6 × 6 × 3 = 108 in the benchmark's tools), so counting them is one
/// increment, expanded into per-value counts once per segment. The code and
/// up to three values of the multi-valued field (keywords) share one 64-bit
/// word per document: counting a match's facets is one random memory read
/// instead of one per array, which was most of the cost. A document with
/// more keywords, or keyword ordinals beyond 13 bits, is marked and counted
/// from the field's own offsets + ordinals.
struct Combos {
    /// Per document, when every code fits in 20 bits: the word described
    /// above (code, keyword count or [`OVERFLOW`], keyword ordinals).
    fused: Option<Vec<u64>>,
    /// Per document, when `fused` is `None`: the code.
    codes: Packed,
    /// The multi-valued field inlined in `fused`.
    inline_field: Option<usize>,
    /// Per code, the value ordinal in each facet field (`u32::MAX`: none,
    /// or a multi-valued field, counted on its own).
    ords: Vec<[u32; 4]>,
}

const CODE_BITS: u32 = 20;
const COUNT_SHIFT: u32 = 20;
const ORD_SHIFT: u32 = 23;
const ORD_BITS: u32 = 13;
const INLINE_VALUES: u64 = 3;
/// The keyword count that says "not inline".
const OVERFLOW: u64 = 7;

impl Combos {
    fn build(facets: &[FacetColumn; 4], max_doc: DocId, inline_field: Option<usize>) -> Self {
        let mut index: HashMap<[u32; 4], u32> = HashMap::new();
        let mut ords: Vec<[u32; 4]> = Vec::new();
        let codes: Vec<u32> = (0..max_doc)
            .map(|doc| {
                let key: [u32; 4] = std::array::from_fn(|f| match &facets[f].ords {
                    Ords::One(p) => p.get(doc as usize).unwrap_or(u32::MAX),
                    Ords::Empty | Ords::Many { .. } => u32::MAX,
                });
                *index.entry(key).or_insert_with(|| {
                    ords.push(key);
                    (ords.len() - 1) as u32
                })
            })
            .collect();
        if ords.len() > 1 << CODE_BITS {
            return Combos {
                fused: None,
                codes: Packed::new(&codes, ords.len()),
                inline_field,
                ords,
            };
        }
        let fused = codes
            .iter()
            .enumerate()
            .map(|(doc, &code)| {
                let mut word = u64::from(code);
                let values = inline_field.map_or_else(Vec::new, |f| facets[f].doc_ords(doc));
                let fits = values.len() as u64 <= INLINE_VALUES
                    && values.iter().all(|&o| o < 1 << ORD_BITS);
                if fits {
                    word |= (values.len() as u64) << COUNT_SHIFT;
                    for (i, &o) in values.iter().enumerate() {
                        word |= u64::from(o) << (ORD_SHIFT + ORD_BITS * i as u32);
                    }
                } else {
                    word |= OVERFLOW << COUNT_SHIFT;
                }
                word
            })
            .collect();
        Combos {
            fused: Some(fused),
            codes: Packed::U8(Vec::new()),
            inline_field,
            ords,
        }
    }

    fn heap_bytes(&self) -> usize {
        self.fused.as_ref().map_or(0, |f| f.capacity() * 8)
            + self.codes.heap_bytes()
            + self.ords.capacity() * 16
    }
}

/// The tables of one segment.
pub(crate) struct SegmentTable {
    /// [`FACETS`], in order.
    pub(crate) facets: [FacetColumn; 4],
    combos: Combos,
    /// The multi-valued facet fields other than the one inlined in the
    /// combination words (counted per value).
    multi: Vec<usize>,
    /// The fast-field columns a query sorts by, opened once (opening one
    /// reads its metadata, a cost per query and segment otherwise): the
    /// name's term ordinals, downloads, update time.
    pub(crate) names: Option<Column<u64>>,
    pub(crate) downloads: Column<u64>,
    pub(crate) updated_at: Column<i64>,
    records: OnceLock<Records>,
    building: Mutex<()>,
}

impl SegmentTable {
    /// Reads the facet ordinals of every document of `segment`.
    pub(crate) fn build(segment: &SegmentReader) -> Result<Self, SearchError> {
        let max_doc = segment.max_doc();
        let fast = segment.fast_fields();
        let column = |name: &str| -> Result<FacetColumn, SearchError> {
            FacetColumn::build(fast.str(name)?, max_doc)
        };
        let facets = [
            column(FACETS[0])?,
            column(FACETS[1])?,
            column(FACETS[2])?,
            column(FACETS[3])?,
        ];
        let mut multi: Vec<usize> = (0..facets.len())
            .filter(|&f| matches!(facets[f].ords, Ords::Many { .. }))
            .collect();
        let inline_field = (!multi.is_empty()).then(|| multi.remove(0));
        let combos = Combos::build(&facets, max_doc, inline_field);
        Ok(SegmentTable {
            facets,
            combos,
            multi,
            names: fast.str("name")?.map(|c| c.ords().clone()),
            downloads: fast.u64("downloads")?,
            updated_at: fast.i64("updated_at")?,
            records: OnceLock::new(),
            building: Mutex::new(()),
        })
    }

    /// The hit records, decoding the segment's stored documents the first
    /// time (concurrent callers wait for that one decoding).
    pub(crate) fn records(
        &self,
        segment: &SegmentReader,
        fields: &Fields,
    ) -> Result<&Records, SearchError> {
        if let Some(records) = self.records.get() {
            return Ok(records);
        }
        // OnceLock has no fallible initializer on stable: one builder at a
        // time under the lock, then set.
        let _building = self.building.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(records) = self.records.get() {
            return Ok(records);
        }
        let built = Records::build(segment, fields)?;
        Ok(self.records.get_or_init(|| built))
    }

    /// Empty facet counts of this segment: per combination of the
    /// single-valued fields, and per value of each field.
    pub(crate) fn facet_counts(&self) -> (Vec<u32>, [Vec<u32>; 4]) {
        (
            vec![0; self.combos.ords.len()],
            std::array::from_fn(|f| vec![0; self.facets[f].num_values()]),
        )
    }

    /// Counts the facet values of `doc`: its combination of single-valued
    /// fields in `combos`, multi-valued fields per value in `values`.
    #[inline]
    pub(crate) fn count(&self, doc: DocId, combos: &mut [u32], values: &mut [Vec<u32>; 4]) {
        match &self.combos.fused {
            Some(fused) => {
                let Some(&word) = fused.get(doc as usize) else {
                    return;
                };
                if let Some(c) = combos.get_mut((word & ((1 << CODE_BITS) - 1)) as usize) {
                    *c += 1;
                }
                if let Some(f) = self.combos.inline_field {
                    let n = (word >> COUNT_SHIFT) & 7;
                    if n == OVERFLOW {
                        self.facets[f].count(doc, &mut values[f]);
                    } else {
                        for i in 0..n as u32 {
                            let ord = (word >> (ORD_SHIFT + ORD_BITS * i)) & ((1 << ORD_BITS) - 1);
                            if let Some(c) = values[f].get_mut(ord as usize) {
                                *c += 1;
                            }
                        }
                    }
                }
            }
            None => {
                if let Some(c) = self
                    .combos
                    .codes
                    .get(doc as usize)
                    .and_then(|code| combos.get_mut(code as usize))
                {
                    *c += 1;
                }
                if let Some(f) = self.combos.inline_field {
                    self.facets[f].count(doc, &mut values[f]);
                }
            }
        }
        for &f in &self.multi {
            self.facets[f].count(doc, &mut values[f]);
        }
    }

    /// Adds the combination counts to the per-value counts.
    pub(crate) fn expand(&self, combos: &[u32], values: &mut [Vec<u32>; 4]) {
        for (ords, &n) in self.combos.ords.iter().zip(combos) {
            if n == 0 {
                continue;
            }
            for (ord, counts) in ords.iter().zip(values.iter_mut()) {
                if let Some(c) = counts.get_mut(*ord as usize) {
                    *c += n;
                }
            }
        }
    }

    /// True once the hit records are built.
    pub(crate) fn has_records(&self) -> bool {
        self.records.get().is_some()
    }

    /// Heap memory held by the table (facet ordinals, values and records).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.facets
            .iter()
            .map(FacetColumn::heap_bytes)
            .sum::<usize>()
            + self.combos.heap_bytes()
            + self.records.get().map_or(0, Records::heap_bytes)
    }
}

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

impl Records {
    fn build(segment: &SegmentReader, fields: &Fields) -> Result<Self, SearchError> {
        let store: StoreReader = segment.get_store_reader(1)?;
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
        Ok(Some(SearchDoc {
            name,
            version,
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
        }))
    }

    fn heap_bytes(&self) -> usize {
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
/// version, [title], description, keyword count and keywords, [license],
/// [blocked reason]. A record without its description (too long) is the
/// flags and the name only.
fn encode(doc: &SearchDoc, out: &mut Vec<u8>) {
    let inline = doc.description.len() <= INLINE_DESCRIPTION;
    let mut flags = 0;
    for (on, flag) in [
        (doc.title.is_some(), HAS_TITLE),
        (doc.license.is_some(), HAS_LICENSE),
        (doc.blocked, BLOCKED),
        (doc.blocked_reason.is_some(), HAS_BLOCKED_REASON),
        (inline, INLINE),
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
        };
        for variant in 0..3 {
            if variant == 1 {
                doc.title = None;
                doc.license = None;
                doc.blocked = false;
                doc.blocked_reason = None;
                doc.keywords.clear();
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
