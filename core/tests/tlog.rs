//! The transparency log's hashing, proofs and signed notes against published
//! test vectors, plus property tests over random tree sizes.

use proptest::prelude::*;
use toolreg_core::tlog::{
    self, leaf_hash, prove_consistency, prove_inclusion, tree_hash, verify_consistency,
    verify_inclusion, Checkpoint, Hash, MemoryHashes, Signer, Verifier,
};

fn h(hex: &str) -> Hash {
    Hash(hex::decode(hex).unwrap().try_into().unwrap())
}

// ---------------------------------------------------------------------------
// RFC 6962 vectors from Certificate Transparency, as kept in
// github.com/transparency-dev/merkle: testonly/constants.go (LeafInputs,
// NodeHashes, RootHashes) and proof/verify_test.go (inclusionProofs,
// consistencyProofs). The inclusion vectors there number leaves from 1;
// below they are converted to 0-based indexes.
// ---------------------------------------------------------------------------

const LEAF_INPUTS: [&str; 8] = [
    "",
    "00",
    "10",
    "2021",
    "3031",
    "40414243",
    "5051525354555657",
    "606162636465666768696a6b6c6d6e6f",
];

/// Level-0 node hashes (the leaf hashes) of the 8-leaf tree.
const LEAF_HASHES: [&str; 8] = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
    "0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7",
    "07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7",
    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
    "4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658",
    "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
    "46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1",
];

/// Roots of the trees of sizes 0..=8.
const ROOTS: [&str; 9] = [
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
];

/// (0-based leaf index, tree size, audit path).
const INCLUSION: &[(u64, u64, &[&str])] = &[
    (0, 1, &[]),
    (
        0,
        8,
        &[
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        5,
        8,
        &[
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (
        2,
        3,
        &["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"],
    ),
    (
        1,
        5,
        &[
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
];

/// (size1, size2, consistency proof).
const CONSISTENCY: &[(u64, u64, &[&str])] = &[
    (1, 1, &[]),
    (
        1,
        8,
        &[
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        6,
        8,
        &[
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (
        2,
        5,
        &[
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
    (
        6,
        7,
        &[
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
];

fn vector_tree() -> MemoryHashes {
    let mut mem = MemoryHashes::new();
    for input in LEAF_INPUTS {
        mem.append(leaf_hash(&hex::decode(input).unwrap())).unwrap();
    }
    mem
}

#[test]
fn leaf_hashes_match_ct_vectors() {
    for (input, want) in LEAF_INPUTS.iter().zip(LEAF_HASHES) {
        assert_eq!(leaf_hash(&hex::decode(input).unwrap()), h(want));
    }
}

#[test]
fn roots_for_every_size_match_ct_vectors() {
    let mut mem = vector_tree();
    for (size, want) in ROOTS.iter().enumerate() {
        assert_eq!(
            tree_hash(size as u64, &mut mem).unwrap(),
            h(want),
            "size {size}"
        );
    }
    assert_eq!(tlog::empty_root(), h(ROOTS[0]));
}

#[test]
fn inclusion_proofs_match_ct_vectors_and_verify() {
    let mut mem = vector_tree();
    for &(index, size, path) in INCLUSION {
        let want: Vec<Hash> = path.iter().map(|p| h(p)).collect();
        let got = prove_inclusion(size, index, &mut mem).unwrap();
        assert_eq!(got, want, "inclusion of {index} in {size}");
        let leaf = h(LEAF_HASHES[index as usize]);
        let root = h(ROOTS[size as usize]);
        verify_inclusion(index, size, &leaf, &want, &root).unwrap();
    }
}

#[test]
fn consistency_proofs_match_ct_vectors_and_verify() {
    let mut mem = vector_tree();
    for &(from, to, path) in CONSISTENCY {
        let want: Vec<Hash> = path.iter().map(|p| h(p)).collect();
        let got = prove_consistency(from, to, &mut mem).unwrap();
        assert_eq!(got, want, "consistency {from} -> {to}");
        verify_consistency(
            from,
            to,
            &want,
            &h(ROOTS[from as usize]),
            &h(ROOTS[to as usize]),
        )
        .unwrap();
    }
}

/// The corruptions of transparency-dev/merkle's `corruptInclusionProof`:
/// every one must fail.
#[test]
fn corrupted_inclusion_vectors_fail() {
    let some = h("abacaba000000000000000000000000000000000000000000060061e00123456");
    for &(index, size, path) in INCLUSION {
        let proof: Vec<Hash> = path.iter().map(|p| h(p)).collect();
        let leaf = h(LEAF_HASHES[index as usize]);
        let root = h(ROOTS[size as usize]);
        let mut probes: Vec<(u64, u64, Hash, Hash, Vec<Hash>)> = vec![
            (index.wrapping_sub(1), size, leaf, root, proof.clone()),
            (index + 1, size, leaf, root, proof.clone()),
            (index ^ 2, size, leaf, root, proof.clone()),
            (index, size * 2, leaf, root, proof.clone()),
            (index, size / 2, leaf, root, proof.clone()),
            (index, size, leaf_hash(b"WrongLeaf"), root, proof.clone()),
            (index, size, leaf, h(ROOTS[0]), proof.clone()),
            (index, size, leaf, some, proof.clone()),
            (
                index,
                size,
                leaf,
                root,
                [proof.clone(), vec![root]].concat(),
            ),
            (
                index,
                size,
                leaf,
                root,
                [vec![root], proof.clone()].concat(),
            ),
        ];
        for i in 0..proof.len() {
            let mut p = proof.clone();
            p[i].0[0] ^= 8;
            probes.push((index, size, leaf, root, p));
        }
        if !proof.is_empty() {
            probes.push((index, size, leaf, root, proof[..proof.len() - 1].to_vec()));
        }
        for (i, s, l, r, p) in probes {
            if (i, s, l, r, &p) == (index, size, leaf, root, &proof) {
                continue;
            }
            assert!(
                verify_inclusion(i, s, &l, &p, &r).is_err(),
                "corrupt probe verified: index {i} size {s} proof len {}",
                p.len()
            );
        }
    }
}

#[test]
fn corrupted_consistency_vectors_fail() {
    for &(from, to, path) in CONSISTENCY {
        let proof: Vec<Hash> = path.iter().map(|p| h(p)).collect();
        if proof.is_empty() {
            continue;
        }
        let r1 = h(ROOTS[from as usize]);
        let r2 = h(ROOTS[to as usize]);
        let mut probes: Vec<(u64, u64, Hash, Hash, Vec<Hash>)> = vec![
            (from - 1, to, r1, r2, proof.clone()),
            (from + 1, to, r1, r2, proof.clone()),
            (from ^ 2, to, r1, r2, proof.clone()),
            (from, to * 2, r1, r2, proof.clone()),
            (from, to / 2, r1, r2, proof.clone()),
            (from, to, leaf_hash(b"WrongRoot"), r2, proof.clone()),
            (from, to, r1, leaf_hash(b"WrongRoot"), proof.clone()),
            (from, to, r2, r1, proof.clone()),
            (from, to, r1, r2, vec![]),
            (from, to, r1, r2, [proof.clone(), vec![r1]].concat()),
            (from, to, r1, r2, [proof.clone(), vec![r2]].concat()),
            (from, to, r1, r2, [vec![r1], proof.clone()].concat()),
            (from, to, r1, r2, [vec![r2], proof.clone()].concat()),
            (from, to, r1, r2, [vec![proof[0]], proof.clone()].concat()),
            (from, to, r1, r2, proof[..proof.len() - 1].to_vec()),
        ];
        for i in 0..proof.len() {
            let mut p = proof.clone();
            p[i].0[0] ^= 16;
            probes.push((from, to, r1, r2, p));
        }
        for (m, n, a, b, p) in probes {
            assert!(
                verify_consistency(m, n, &p, &a, &b).is_err(),
                "corrupt probe verified: {m} -> {n}, proof len {}",
                p.len()
            );
        }
    }
}

#[test]
fn proof_requests_out_of_range_are_errors() {
    let mut mem = vector_tree();
    assert!(prove_inclusion(8, 8, &mut mem).is_err());
    assert!(prove_inclusion(0, 0, &mut mem).is_err());
    assert!(prove_consistency(5, 4, &mut mem).is_err());
    // Beyond what is stored: the store says so instead of inventing hashes.
    assert!(tree_hash(9, &mut mem).is_err());
    assert!(prove_inclusion(16, 3, &mut mem).is_err());
}

// ---------------------------------------------------------------------------
// Signed notes: vectors from golang.org/x/mod, sumdb/note/note_test.go
// (TestSign, TestOpen, TestNewVerifier).
// ---------------------------------------------------------------------------

const PETER_SKEY: &str =
    "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
const PETER_VKEY: &str = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
const ENOCH_VKEY: &str = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop";
const NOTE_TEXT: &str = "If you think cryptography is the answer to your problem,\n\
                         then you don't know what your problem is.\n";
const PETER_SIG: &str = "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
const ENOCH_SIG: &str = "— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n";

#[test]
fn signing_matches_go_note_vector() {
    let signer = Signer::from_key_string(PETER_SKEY).unwrap();
    assert_eq!(signer.key_id(), 0xc74f20a3);
    assert_eq!(signer.verifier_key(), PETER_VKEY);
    assert_eq!(signer.to_key_string(), PETER_SKEY);
    let note = signer.sign(NOTE_TEXT).unwrap();
    assert_eq!(note, format!("{NOTE_TEXT}\n{PETER_SIG}"));
}

#[test]
fn opening_go_note_vectors() {
    let peter = Verifier::parse(PETER_VKEY).unwrap();
    let enoch = Verifier::parse(ENOCH_VKEY).unwrap();
    assert_eq!(peter.to_key_string(), PETER_VKEY);
    let both = format!("{NOTE_TEXT}\n{PETER_SIG}{ENOCH_SIG}");
    assert_eq!(peter.open(&both).unwrap(), NOTE_TEXT);
    assert_eq!(enoch.open(&both).unwrap(), NOTE_TEXT);
    // Only Enoch signed: no signature by Peter.
    let enoch_only = format!("{NOTE_TEXT}\n{ENOCH_SIG}");
    assert!(matches!(
        peter.open(&enoch_only),
        Err(tlog::Error::LogSignature(_))
    ));
    // A signature claiming Peter's key that doesn't verify.
    let forged = format!("{NOTE_TEXT}\n{}ABCD{}", &PETER_SIG[..60], &PETER_SIG[60..]);
    assert!(peter.open(&forged).is_err());
    // Altered text.
    let altered = format!("{}\n{PETER_SIG}", NOTE_TEXT.replace("answer", "Answer"));
    assert!(matches!(
        peter.open(&altered),
        Err(tlog::Error::LogSignature(_))
    ));
    // Malformed notes (TestOpen's badMsgs).
    for bad in [
        NOTE_TEXT.to_string(),
        format!("{NOTE_TEXT}\n"),
        format!("{NOTE_TEXT}\n{}", &PETER_SIG[..PETER_SIG.len() - 1]),
        format!("\u{1}{NOTE_TEXT}\n{PETER_SIG}"),
        format!("{NOTE_TEXT}\n{PETER_SIG}Unexpected line.\n"),
        format!("{NOTE_TEXT}\n{}", PETER_SIG.repeat(101)),
    ] {
        assert!(peter.open(&bad).is_err(), "{bad:?} opened");
    }
}

#[test]
fn verifier_keys_reject_manglings() {
    assert!(Verifier::parse(PETER_VKEY).is_ok());
    let b = PETER_VKEY.as_bytes();
    // Every strict substring and every single-byte change fails (TestNewVerifier).
    for i in 0..=b.len() {
        for j in i + 1..=b.len() {
            if i == 0 && j == b.len() {
                continue;
            }
            let s = String::from_utf8_lossy(&b[i..j]);
            assert!(Verifier::parse(&s).is_err(), "{s:?} accepted");
        }
    }
    for i in 0..b.len() {
        let mut m = b.to_vec();
        m[i] = m[i].wrapping_add(1);
        let s = String::from_utf8_lossy(&m).to_string();
        // Case changes in the hex key id are the same key id.
        if s.eq_ignore_ascii_case(PETER_VKEY) && i > 12 && i < 21 {
            continue;
        }
        assert!(Verifier::parse(&s).is_err(), "{s:?} accepted");
    }
    assert!(
        Verifier::parse("PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW")
            .is_err()
    );
}

#[test]
fn checkpoint_sign_open_and_tamper() {
    let signer = Signer::from_seed("toolreg.local/log", [7u8; 32]).unwrap();
    let verifier = Verifier::parse(&signer.verifier_key()).unwrap();
    let mut mem = vector_tree();
    let cp = Checkpoint {
        origin: "toolreg.local/log".to_string(),
        size: 8,
        root: tree_hash(8, &mut mem).unwrap(),
    };
    let note = cp.sign(&signer).unwrap();
    assert!(note.starts_with(&format!(
        "toolreg.local/log\n8\n{}\n\n— toolreg.local/log ",
        cp.root
    )));
    assert_eq!(Checkpoint::open(&note, &verifier).unwrap(), cp);

    // A different size under the same signature fails.
    let forged = note.replacen("\n8\n", "\n7\n", 1);
    assert!(Checkpoint::open(&forged, &verifier).is_err());
    // Another key with the same name does not verify it.
    let other = Signer::from_seed("toolreg.local/log", [8u8; 32]).unwrap();
    assert!(Checkpoint::open(&note, &other.verifier()).is_err());
    // A signer named differently from the origin refuses to sign.
    let misnamed = Signer::from_seed("elsewhere/log", [7u8; 32]).unwrap();
    assert!(cp.sign(&misnamed).is_err());
    // Bodies that aren't checkpoints.
    for bad in [
        "toolreg.local/log\n08\nAAAA\n",
        "toolreg.local/log\n8\n",
        "\n8\nAAAA\n",
    ] {
        assert!(Checkpoint::parse_body(bad).is_err(), "{bad:?}");
    }
}

// ---------------------------------------------------------------------------
// Properties over random trees.
// ---------------------------------------------------------------------------

fn tree_of(size: u64) -> MemoryHashes {
    let mut mem = MemoryHashes::new();
    for i in 0..size {
        mem.append(leaf_hash(
            tlog::record("t", &format!("1.0.{i}"), &"0".repeat(64)).as_bytes(),
        ))
        .unwrap();
    }
    mem
}

/// Reference MTH straight from RFC 9162 §2.1.1's recursive definition.
fn reference_root(leaves: &[Hash]) -> Hash {
    match leaves.len() {
        0 => tlog::empty_root(),
        1 => leaves[0],
        n => {
            // The largest power of two smaller than n.
            let mut k = 1;
            while k * 2 < n {
                k *= 2;
            }
            tlog::node_hash(&reference_root(&leaves[..k]), &reference_root(&leaves[k..]))
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn roots_match_the_rfc_definition(size in 0u64..300) {
        let mut mem = tree_of(size);
        let leaves: Vec<Hash> = (0..size)
            .map(|i| leaf_hash(tlog::record("t", &format!("1.0.{i}"), &"0".repeat(64)).as_bytes()))
            .collect();
        for s in [size / 3, size / 2, size] {
            prop_assert_eq!(tree_hash(s, &mut mem).unwrap(), reference_root(&leaves[..s as usize]));
        }
    }

    #[test]
    fn every_inclusion_proof_verifies_and_tampering_fails(
        size in 1u64..1200, seed in any::<u64>(), flip in any::<u8>()
    ) {
        let mut mem = tree_of(size);
        let tree_size = 1 + seed % size;
        let index = (seed / 7) % tree_size;
        let root = tree_hash(tree_size, &mut mem).unwrap();
        let leaf = leaf_hash(tlog::record("t", &format!("1.0.{index}"), &"0".repeat(64)).as_bytes());
        let proof = prove_inclusion(tree_size, index, &mut mem).unwrap();
        prop_assert!(proof.len() <= 64 - (tree_size.leading_zeros() as usize) + 1);
        verify_inclusion(index, tree_size, &leaf, &proof, &root).unwrap();

        // Tamper: a flipped bit in a proof hash, the root, or the leaf.
        if !proof.is_empty() {
            let mut bad = proof.clone();
            let at = usize::from(flip) % bad.len();
            bad[at].0[usize::from(flip) % 32] ^= 1 << (flip % 8);
            prop_assert!(verify_inclusion(index, tree_size, &leaf, &bad, &root).is_err());
            prop_assert!(verify_inclusion(index, tree_size, &leaf, &proof[1..], &root).is_err());
        }
        let mut bad_root = root;
        bad_root.0[0] ^= 1;
        prop_assert!(verify_inclusion(index, tree_size, &leaf, &proof, &bad_root).is_err());
        let other = leaf_hash(b"toolreg t 1.0.0 sha256:swapped\n");
        prop_assert!(verify_inclusion(index, tree_size, &other, &proof, &root).is_err());
        // The same proof doesn't prove another position.
        if tree_size > 1 {
            let elsewhere = (index + 1) % tree_size;
            prop_assert!(verify_inclusion(elsewhere, tree_size, &leaf, &proof, &root).is_err());
        }
    }

    #[test]
    fn every_consistency_proof_verifies_and_tampering_fails(
        size in 1u64..1200, a in any::<u64>(), b in any::<u64>(), flip in any::<u8>()
    ) {
        let mut mem = tree_of(size);
        let to = 1 + a % size;
        let from = b % (to + 1);
        let r1 = tree_hash(from, &mut mem).unwrap();
        let r2 = tree_hash(to, &mut mem).unwrap();
        let proof = prove_consistency(from, to, &mut mem).unwrap();
        verify_consistency(from, to, &proof, &r1, &r2).unwrap();

        if from > 0 && from < to {
            let mut bad = proof.clone();
            let at = usize::from(flip) % bad.len();
            bad[at].0[usize::from(flip) % 32] ^= 1 << (flip % 8);
            prop_assert!(verify_consistency(from, to, &bad, &r1, &r2).is_err());
            let mut forked = r2;
            forked.0[31] ^= 0x80;
            prop_assert!(verify_consistency(from, to, &proof, &r1, &forked).is_err());
            prop_assert!(verify_consistency(from, to, &proof, &r2, &r1).is_err());
            // Rolled back: asking to go from the bigger tree to the smaller.
            prop_assert!(verify_consistency(to, from, &proof, &r2, &r1).is_err());
        }
    }
}
