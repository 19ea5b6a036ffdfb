//! Tree roots, inclusion proofs and consistency proofs computed from the
//! stored hashes of complete subtrees (RFC 9162 §2.1, in the stored-hash
//! layout of Go's `sumdb/tlog`).
//!
//! Every function first lists the stored hashes it needs, reads them in one
//! [`HashReader::read_hashes`] call, then combines them. The recursion mirrors
//! RFC 9162's `MTH`, `PATH` and `SUBPROOF` definitions: split `[lo, hi)` at
//! the largest power of two `k < hi - lo`; a subtree whose range is a
//! complete, aligned power of two is one stored hash.

use super::{node_hash, Error, Hash};

/// Where one stored hash lives: `level` 0 is the leaves, and the hash at
/// `(level, n)` covers leaves `[n·2^level, (n+1)·2^level)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StoredIndex {
    /// Height above the leaves.
    pub level: u8,
    /// Position within the level.
    pub n: u64,
}

impl StoredIndex {
    /// One integer per stored hash, dense and increasing in the order hashes
    /// are written (Go's `tlog.StoredHashIndex`): handy as a primary key.
    pub fn id(&self) -> u64 {
        let mut n = self.n;
        for _ in 0..self.level {
            n = 2 * n + 1;
        }
        let mut i = 0u64;
        while n > 0 {
            i += n;
            n >>= 1;
        }
        i + u64::from(self.level)
    }
}

/// Reads stored hashes. The answer must have one hash per index, in order.
pub trait HashReader {
    /// The reader's error; log errors (bad requests, storage answering the
    /// wrong number of hashes) are converted into it.
    type Error: From<Error>;

    /// The stored hashes at `indexes`, in the same order.
    fn read_hashes(&mut self, indexes: &[StoredIndex]) -> Result<Vec<Hash>, Self::Error>;
}

/// All stored hashes in memory, one vector per level — for tests,
/// benchmarks and tools that rebuild a tree from its records.
#[derive(Debug, Clone, Default)]
pub struct MemoryHashes {
    levels: Vec<Vec<Hash>>,
}

impl MemoryHashes {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of leaves appended.
    pub fn size(&self) -> u64 {
        self.levels.first().map_or(0, |l| l.len() as u64)
    }

    /// Append a leaf hash, storing every subtree hash it completes.
    pub fn append(&mut self, leaf: Hash) -> Result<(), Error> {
        let n = self.size();
        let new = stored_hashes_for_record(n, leaf, self)?;
        for (index, hash) in new {
            let level = usize::from(index.level);
            if self.levels.len() <= level {
                self.levels.push(Vec::new());
            }
            if self.levels[level].len() as u64 != index.n {
                return Err(Error::LogStorage(format!(
                    "stored hash ({}, {}) out of order",
                    index.level, index.n
                )));
            }
            self.levels[level].push(hash);
        }
        Ok(())
    }
}

impl HashReader for MemoryHashes {
    type Error = Error;

    fn read_hashes(&mut self, indexes: &[StoredIndex]) -> Result<Vec<Hash>, Error> {
        indexes
            .iter()
            .map(|i| {
                self.levels
                    .get(usize::from(i.level))
                    .and_then(|l| usize::try_from(i.n).ok().and_then(|n| l.get(n)))
                    .copied()
                    .ok_or_else(|| {
                        Error::LogStorage(format!("no stored hash at ({}, {})", i.level, i.n))
                    })
            })
            .collect()
    }
}

/// The hashes to store when appending leaf number `n` (0-based) with hash
/// `leaf`: the leaf itself at `(0, n)` and one node for every subtree it
/// completes. Reads the left siblings it needs from `r`.
pub fn stored_hashes_for_record<R: HashReader>(
    n: u64,
    leaf: Hash,
    r: &mut R,
) -> Result<Vec<(StoredIndex, Hash)>, R::Error> {
    // Each trailing 1 bit of n completes a subtree with its left neighbour.
    let completed = (n + 1).trailing_zeros() as u8;
    let siblings: Vec<StoredIndex> = (0..completed)
        .map(|level| StoredIndex {
            level,
            n: (n >> level) - 1,
        })
        .collect();
    let old = read_exact(r, &siblings)?;
    let mut out = Vec::with_capacity(usize::from(completed) + 1);
    let mut h = leaf;
    out.push((StoredIndex { level: 0, n }, h));
    for (level, left) in (1..=completed).zip(old.iter()) {
        h = node_hash(left, &h);
        out.push((
            StoredIndex {
                level,
                n: n >> level,
            },
            h,
        ));
    }
    Ok(out)
}

/// The root hash of the tree of the first `size` leaves.
pub fn tree_hash<R: HashReader>(size: u64, r: &mut R) -> Result<Hash, R::Error> {
    if size == 0 {
        return Ok(super::empty_root());
    }
    let mut need = Vec::new();
    subtree_indexes(0, size, &mut need)?;
    let hashes = read_exact(r, &need)?;
    let mut cursor = Cursor::new(&hashes);
    Ok(subtree_hash(0, size, &mut cursor)?)
}

/// The inclusion proof (RFC 9162 `PATH`) of leaf `index` in the tree of
/// `size` leaves, leaf-side first.
pub fn prove_inclusion<R: HashReader>(
    size: u64,
    index: u64,
    r: &mut R,
) -> Result<Vec<Hash>, R::Error> {
    if index >= size {
        return Err(
            Error::LogRequest(format!("leaf {index} is not in a tree of size {size}")).into(),
        );
    }
    let mut need = Vec::new();
    inclusion_indexes(0, size, index, &mut need)?;
    let hashes = read_exact(r, &need)?;
    let mut cursor = Cursor::new(&hashes);
    let mut proof = Vec::new();
    inclusion_proof(0, size, index, &mut cursor, &mut proof)?;
    Ok(proof)
}

/// The consistency proof (RFC 9162 `PROOF(m, D[n])`) between the trees of
/// `from` and `to` leaves. Empty when `from` is 0 or equal to `to`.
pub fn prove_consistency<R: HashReader>(
    from: u64,
    to: u64,
    r: &mut R,
) -> Result<Vec<Hash>, R::Error> {
    if from > to {
        return Err(
            Error::LogRequest(format!("from ({from}) must not be larger than to ({to})")).into(),
        );
    }
    if from == 0 || from == to {
        return Ok(Vec::new());
    }
    let mut need = Vec::new();
    consistency_indexes(0, to, from, &mut need)?;
    let hashes = read_exact(r, &need)?;
    let mut cursor = Cursor::new(&hashes);
    let mut proof = Vec::new();
    consistency_proof(0, to, from, &mut cursor, &mut proof)?;
    Ok(proof)
}

fn read_exact<R: HashReader>(r: &mut R, indexes: &[StoredIndex]) -> Result<Vec<Hash>, R::Error> {
    if indexes.is_empty() {
        return Ok(Vec::new());
    }
    let hashes = r.read_hashes(indexes)?;
    if hashes.len() != indexes.len() {
        return Err(Error::LogStorage(format!(
            "asked for {} stored hashes, got {}",
            indexes.len(),
            hashes.len()
        ))
        .into());
    }
    Ok(hashes)
}

/// The largest power of two smaller than `n` (for `n >= 2`), and its log₂.
fn split_point(n: u64) -> (u64, u8) {
    debug_assert!(n >= 2);
    let level = 63 - (n - 1).leading_zeros() as u8;
    (1u64 << level, level)
}

/// The stored hashes that make up the (possibly incomplete) subtree
/// `[lo, hi)`: its complete power-of-two parts, left to right.
fn subtree_indexes(mut lo: u64, hi: u64, need: &mut Vec<StoredIndex>) -> Result<(), Error> {
    while lo < hi {
        let (k, level) = largest_complete(hi - lo);
        if lo & (k - 1) != 0 {
            return Err(Error::LogStorage(format!(
                "subtree [{lo}, {hi}) is not aligned"
            )));
        }
        need.push(StoredIndex {
            level,
            n: lo >> level,
        });
        lo += k;
    }
    Ok(())
}

/// The largest power of two `<= n` (for `n >= 1`), and its log₂.
fn largest_complete(n: u64) -> (u64, u8) {
    let level = 63 - n.leading_zeros() as u8;
    (1u64 << level, level)
}

struct Cursor<'a> {
    hashes: &'a [Hash],
}

impl<'a> Cursor<'a> {
    fn new(hashes: &'a [Hash]) -> Self {
        Cursor { hashes }
    }

    fn take(&mut self, count: usize) -> Result<&'a [Hash], Error> {
        if self.hashes.len() < count {
            return Err(Error::LogStorage("too few stored hashes".to_string()));
        }
        let (head, tail) = self.hashes.split_at(count);
        self.hashes = tail;
        Ok(head)
    }
}

/// Combine the stored parts of `[lo, hi)` (as listed by [`subtree_indexes`])
/// into its hash: the rightmost parts are combined first.
fn subtree_hash(mut lo: u64, hi: u64, cursor: &mut Cursor<'_>) -> Result<Hash, Error> {
    let mut parts = 0usize;
    while lo < hi {
        lo += largest_complete(hi - lo).0;
        parts += 1;
    }
    let parts = cursor.take(parts)?;
    let (last, rest) = parts
        .split_last()
        .ok_or_else(|| Error::LogStorage("empty subtree".to_string()))?;
    Ok(rest.iter().rev().fold(*last, |h, left| node_hash(left, &h)))
}

fn inclusion_indexes(lo: u64, hi: u64, m: u64, need: &mut Vec<StoredIndex>) -> Result<(), Error> {
    if hi - lo == 1 {
        return Ok(());
    }
    let (k, _) = split_point(hi - lo);
    if m < lo + k {
        inclusion_indexes(lo, lo + k, m, need)?;
        subtree_indexes(lo + k, hi, need)
    } else {
        subtree_indexes(lo, lo + k, need)?;
        inclusion_indexes(lo + k, hi, m, need)
    }
}

fn inclusion_proof(
    lo: u64,
    hi: u64,
    m: u64,
    cursor: &mut Cursor<'_>,
    proof: &mut Vec<Hash>,
) -> Result<(), Error> {
    if hi - lo == 1 {
        return Ok(());
    }
    let (k, _) = split_point(hi - lo);
    if m < lo + k {
        inclusion_proof(lo, lo + k, m, cursor, proof)?;
        proof.push(subtree_hash(lo + k, hi, cursor)?);
    } else {
        let left = subtree_hash(lo, lo + k, cursor)?;
        inclusion_proof(lo + k, hi, m, cursor, proof)?;
        proof.push(left);
    }
    Ok(())
}

fn consistency_indexes(lo: u64, hi: u64, m: u64, need: &mut Vec<StoredIndex>) -> Result<(), Error> {
    if m == hi {
        if lo == 0 {
            return Ok(());
        }
        return subtree_indexes(lo, hi, need);
    }
    let (k, _) = split_point(hi - lo);
    if m <= lo + k {
        consistency_indexes(lo, lo + k, m, need)?;
        subtree_indexes(lo + k, hi, need)
    } else {
        subtree_indexes(lo, lo + k, need)?;
        consistency_indexes(lo + k, hi, m, need)
    }
}

fn consistency_proof(
    lo: u64,
    hi: u64,
    m: u64,
    cursor: &mut Cursor<'_>,
    proof: &mut Vec<Hash>,
) -> Result<(), Error> {
    if m == hi {
        if lo != 0 {
            proof.push(subtree_hash(lo, hi, cursor)?);
        }
        return Ok(());
    }
    let (k, _) = split_point(hi - lo);
    if m <= lo + k {
        consistency_proof(lo, lo + k, m, cursor, proof)?;
        proof.push(subtree_hash(lo + k, hi, cursor)?);
    } else {
        let left = subtree_hash(lo, lo + k, cursor)?;
        consistency_proof(lo + k, hi, m, cursor, proof)?;
        proof.push(left);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_index_ids_are_dense_in_write_order() {
        // Go's tlog: the hashes written for leaves 0..4 are ids 0..=6 in order.
        let mut mem = MemoryHashes::new();
        let mut ids = Vec::new();
        for i in 0..8u64 {
            let new =
                stored_hashes_for_record(i, super::super::leaf_hash(&[i as u8]), &mut mem).unwrap();
            ids.extend(new.iter().map(|(idx, _)| idx.id()));
            mem.append(super::super::leaf_hash(&[i as u8])).unwrap();
        }
        assert_eq!(ids, (0..ids.len() as u64).collect::<Vec<_>>());
    }

    #[test]
    fn split_points() {
        assert_eq!(split_point(2), (1, 0));
        assert_eq!(split_point(3), (2, 1));
        assert_eq!(split_point(4), (2, 1));
        assert_eq!(split_point(5), (4, 2));
        assert_eq!(largest_complete(1), (1, 0));
        assert_eq!(largest_complete(4), (4, 2));
        assert_eq!(largest_complete(7), (4, 2));
    }
}
