//! Property tests: any tool directory survives pack → unpack unchanged and
//! packs to the same bytes twice; name normalization is idempotent; and
//! hostile input (random bundle bytes, random definitions) is refused with
//! an error, never a panic.

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use toolreg_core::bundle::{pack, unpack, Limits};
use toolreg_core::name;
use toolreg_core::{load, ToolFiles};

fn segment() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,11}".prop_filter("not . or ..", |s| s != "." && s != "..")
}

fn rel_path() -> impl Strategy<Value = String> {
    vec(segment(), 1..4).prop_map(|parts| parts.join("/"))
}

fn tool_dir() -> impl Strategy<Value = ToolFiles> {
    btree_map(rel_path(), vec(any::<u8>(), 0..2000), 0..12)
        .prop_filter("a path can't be both a file and a directory", |m| {
            !m.keys()
                .any(|a| m.keys().any(|b| b.starts_with(&format!("{a}/"))))
        })
        .prop_map(|m| {
            let mut f = ToolFiles::new();
            for (p, b) in m {
                f.insert(p, b);
            }
            f
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn pack_unpack_round_trips(files in tool_dir()) {
        let bytes = pack(&files).unwrap();
        prop_assert_eq!(&bytes, &pack(&files).unwrap());
        let back = unpack(&bytes, &Limits::default()).unwrap();
        prop_assert_eq!(back, files);
    }

    #[test]
    fn normalize_is_idempotent(s in "\\PC{0,60}") {
        let once = name::normalize(&s);
        prop_assert_eq!(name::normalize(&once), once.clone());
    }

    #[test]
    fn valid_names_are_their_own_normal_form(s in "[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,8}){0,4}") {
        prop_assume!(s.len() >= name::MIN_LEN && s.len() <= name::MAX_LEN);
        prop_assert!(name::is_valid(&s));
        prop_assert_eq!(name::normalize(&s), s.clone());
        prop_assert_eq!(name::derive(&s), s);
    }

    #[test]
    fn random_bytes_never_panic_unpack(bytes in vec(any::<u8>(), 0..4000)) {
        let _ = unpack(&bytes, &Limits::default());
        // A valid gzip header followed by junk, too.
        let mut gz = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
        gz.extend_from_slice(&bytes);
        let _ = unpack(&gz, &Limits::default());
    }

    #[test]
    fn random_definitions_never_panic_load(text in "\\PC{0,300}", which in 0usize..5) {
        let file = ["definition.yaml", "definition.yml", "metadata.json", "tool.json", "prompt.json"][which];
        let mut f = ToolFiles::new();
        f.insert(file, text.into_bytes());
        let _ = load(&f);
    }
}
