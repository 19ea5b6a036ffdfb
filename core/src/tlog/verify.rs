//! Verification of inclusion and consistency proofs, written from RFC 9162
//! §2.1.3.2 and §2.1.4.2 (independently of the generation code in `tree`,
//! so the two check each other in the tests).

use super::{node_hash, Error, Hash};

/// The root that an inclusion proof leads to from leaf `index` with hash
/// `leaf` in a tree of `size` leaves (RFC 9162 §2.1.3.2, steps 1–5 without
/// the final comparison).
pub fn root_from_inclusion(
    index: u64,
    size: u64,
    leaf: &Hash,
    proof: &[Hash],
) -> Result<Hash, Error> {
    if index >= size {
        return Err(Error::LogInclusion(format!(
            "leaf {index} is beyond a tree of size {size}"
        )));
    }
    let mut f = index;
    let mut s = size - 1;
    let mut r = *leaf;
    for p in proof {
        if s == 0 {
            return Err(Error::LogInclusion("the proof is too long".to_string()));
        }
        if f & 1 == 1 || f == s {
            r = node_hash(p, &r);
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            r = node_hash(&r, p);
        }
        f >>= 1;
        s >>= 1;
    }
    if s != 0 {
        return Err(Error::LogInclusion("the proof is too short".to_string()));
    }
    Ok(r)
}

/// Check that leaf `index` with hash `leaf` is in the tree of `size`
/// leaves whose root is `root` (RFC 9162 §2.1.3.2).
pub fn verify_inclusion(
    index: u64,
    size: u64,
    leaf: &Hash,
    proof: &[Hash],
    root: &Hash,
) -> Result<(), Error> {
    let computed = root_from_inclusion(index, size, leaf, proof)?;
    if computed != *root {
        return Err(Error::LogInclusion(format!(
            "leaf {index} does not lead to the root of the tree of size {size}"
        )));
    }
    Ok(())
}

/// Check that the tree of `from` leaves with root `from_root` is a prefix of
/// the tree of `to` leaves with root `to_root` (RFC 9162 §2.1.4.2, plus the
/// trivial cases `from == 0` and `from == to`).
pub fn verify_consistency(
    from: u64,
    to: u64,
    proof: &[Hash],
    from_root: &Hash,
    to_root: &Hash,
) -> Result<(), Error> {
    if from > to {
        return Err(Error::LogConsistency(format!(
            "the tree went from size {from} back to {to}"
        )));
    }
    if from == to {
        if !proof.is_empty() {
            return Err(Error::LogConsistency(
                "a proof between equal sizes must be empty".to_string(),
            ));
        }
        if from_root != to_root {
            return Err(Error::LogConsistency(format!(
                "two different roots for the same size {from}"
            )));
        }
        return Ok(());
    }
    if from == 0 {
        if !proof.is_empty() {
            return Err(Error::LogConsistency(
                "a proof from the empty tree must be empty".to_string(),
            ));
        }
        return Ok(());
    }
    if proof.is_empty() {
        return Err(Error::LogConsistency("the proof is empty".to_string()));
    }
    let mut path: Vec<Hash> = Vec::with_capacity(proof.len() + 1);
    if from.is_power_of_two() {
        path.push(*from_root);
    }
    path.extend_from_slice(proof);
    let mut f = from - 1;
    let mut s = to - 1;
    while f & 1 == 1 {
        f >>= 1;
        s >>= 1;
    }
    let mut fr = path[0];
    let mut sr = path[0];
    for c in &path[1..] {
        if s == 0 {
            return Err(Error::LogConsistency("the proof is too long".to_string()));
        }
        if f & 1 == 1 || f == s {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            sr = node_hash(&sr, c);
        }
        f >>= 1;
        s >>= 1;
    }
    if s != 0 {
        return Err(Error::LogConsistency("the proof is too short".to_string()));
    }
    if fr != *from_root {
        return Err(Error::LogConsistency(format!(
            "the proof does not lead to the root of the tree of size {from}"
        )));
    }
    if sr != *to_root {
        return Err(Error::LogConsistency(format!(
            "the proof does not lead to the root of the tree of size {to}"
        )));
    }
    Ok(())
}
