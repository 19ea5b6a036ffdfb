//! The facet side of a segment's table: for each facet field (license,
//! keyword, execution, tier) the values and every document's value ordinals
//! ([`FacetColumn`], read from the fast-field string columns with the same
//! `term_ords` a per-match lookup would use), and, for counting, one 64-bit
//! word per document holding the combination of its single-valued fields
//! and up to three keyword ordinals (`Combos`): counting a match's facets is
//! one memory read and a few increments ([`FacetTable::count`]).

use std::collections::HashMap;

use tantivy::columnar::StrColumn;
use tantivy::fastfield::FastFieldReaders;
use tantivy::DocId;

use crate::SearchError;

/// The facet fields (fast-field names), in [`crate::SearchFacets`] order.
pub(crate) const FACETS: [&str; 4] = ["license", "keyword", "execution", "tier"];

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
/// *combination code*: a segment has few distinct combinations, so counting
/// them is one increment, expanded into per-value counts once per segment.
/// The code and up to three values of the multi-valued field (keywords)
/// share one 64-bit word per document: counting a match's facets is one
/// random memory read instead of one per array. A document with more
/// keywords, or keyword ordinals beyond 13 bits, is marked and counted from
/// the field's own offsets + ordinals.
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

/// The facet columns of one segment and the combination words that count them.
pub(crate) struct FacetTable {
    /// [`FACETS`], in order.
    pub(crate) columns: [FacetColumn; 4],
    combos: Combos,
    /// The multi-valued facet fields other than the one inlined in the
    /// combination words (counted per value).
    multi: Vec<usize>,
}

impl FacetTable {
    /// Reads the facet ordinals of every document of a segment.
    pub(crate) fn build(fast: &FastFieldReaders, max_doc: DocId) -> Result<Self, SearchError> {
        let column = |name: &str| -> Result<FacetColumn, SearchError> {
            FacetColumn::build(fast.str(name)?, max_doc)
        };
        let columns = [
            column(FACETS[0])?,
            column(FACETS[1])?,
            column(FACETS[2])?,
            column(FACETS[3])?,
        ];
        let mut multi: Vec<usize> = (0..columns.len())
            .filter(|&f| matches!(columns[f].ords, Ords::Many { .. }))
            .collect();
        let inline_field = (!multi.is_empty()).then(|| multi.remove(0));
        let combos = Combos::build(&columns, max_doc, inline_field);
        Ok(FacetTable {
            columns,
            combos,
            multi,
        })
    }

    /// Empty facet counts of this segment: per combination of the
    /// single-valued fields, and per value of each field.
    pub(crate) fn facet_counts(&self) -> (Vec<u32>, [Vec<u32>; 4]) {
        (
            vec![0; self.combos.ords.len()],
            std::array::from_fn(|f| vec![0; self.columns[f].num_values()]),
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
                        self.columns[f].count(doc, &mut values[f]);
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
                    self.columns[f].count(doc, &mut values[f]);
                }
            }
        }
        for &f in &self.multi {
            self.columns[f].count(doc, &mut values[f]);
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

    /// Heap memory of the columns and the combination words.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.columns
            .iter()
            .map(FacetColumn::heap_bytes)
            .sum::<usize>()
            + self.combos.heap_bytes()
    }
}
