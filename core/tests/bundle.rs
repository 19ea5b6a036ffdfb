//! Bundles: `pack` is deterministic (same files → same sha256 on any
//! machine, whatever the mtimes and permissions on disk), and `unpack`
//! refuses what a bundle may not hold — absolute paths, `..`, links,
//! devices, names that are not UTF-8, the same entry twice, and more
//! entries or bytes than the limits allow — each with an error naming the
//! limit or the entry.

use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;
use tar::{EntryType, Header};
use toolreg_core::bundle::{pack, pack_dir, unpack, Limits};
use toolreg_core::digest::sha256_hex;
use toolreg_core::{Error, ToolFiles};

fn sample() -> ToolFiles {
    let mut f = ToolFiles::new();
    f.insert(
        "tool.json",
        br#"{"name":"x","inputSchema":{"type":"object"}}"#.to_vec(),
    );
    f.insert("README.md", b"# x\n".to_vec());
    f.insert("src/lib/code.ts", b"export default 1;\n".to_vec());
    f
}

/// A gzip'd tar built entry by entry from raw headers, for hostile bundles.
struct RawTar {
    tar: Vec<u8>,
}

impl RawTar {
    fn new() -> Self {
        RawTar { tar: Vec::new() }
    }
    /// Append an entry; the name is written as raw bytes (may be non-UTF-8,
    /// absolute, contain `..`).
    fn entry(mut self, name: &[u8], kind: EntryType, data: &[u8]) -> Self {
        let mut h = Header::new_gnu();
        {
            let gnu = h.as_gnu_mut().unwrap();
            gnu.name[..name.len()].copy_from_slice(name);
        }
        h.set_entry_type(kind);
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        if matches!(kind, EntryType::Symlink | EntryType::Link) {
            h.set_link_name("target").unwrap();
        }
        h.set_cksum();
        self.tar.extend_from_slice(h.as_bytes());
        self.tar.extend_from_slice(data);
        let pad = (512 - data.len() % 512) % 512;
        self.tar.extend(std::iter::repeat_n(0u8, pad));
        self
    }
    fn file(self, name: &str, data: &[u8]) -> Self {
        self.entry(name.as_bytes(), EntryType::Regular, data)
    }
    fn gz(mut self) -> Vec<u8> {
        self.tar.extend(std::iter::repeat_n(0u8, 1024));
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(&self.tar).unwrap();
        enc.finish().unwrap()
    }
}

fn bundle_err(bytes: &[u8], limits: &Limits) -> String {
    match unpack(bytes, limits) {
        Ok(files) => panic!(
            "expected a refusal, got {:?}",
            files.paths().collect::<Vec<_>>()
        ),
        Err(e) => e.to_string(),
    }
}

#[test]
fn pack_then_unpack_round_trips() {
    let files = sample();
    let bytes = pack(&files).unwrap();
    let back = unpack(&bytes, &Limits::default()).unwrap();
    assert_eq!(back, files);
}

#[test]
fn pack_is_deterministic_across_directories_mtimes_and_modes() {
    use std::os::unix::fs::PermissionsExt;
    let write_tree = |dir: &std::path::Path, mode: u32, mtime_secs: u64| {
        for (path, bytes) in sample().iter() {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, bytes).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(mtime_secs);
            std::fs::File::options()
                .write(true)
                .open(&p)
                .unwrap()
                .set_modified(t)
                .unwrap();
        }
    };
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    write_tree(a.path(), 0o600, 1_000_000);
    write_tree(b.path(), 0o755, 1_700_000_000);
    let pa = pack_dir(a.path()).unwrap();
    let pb = pack_dir(b.path()).unwrap();
    assert_eq!(sha256_hex(&pa), sha256_hex(&pb));
    assert_eq!(pa, pack(&sample()).unwrap());

    // And the headers carry the fixed metadata.
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(pa.as_slice()));
    let mut names = Vec::new();
    for e in archive.entries().unwrap() {
        let e = e.unwrap();
        let h = e.header();
        assert_eq!(h.mode().unwrap(), 0o644);
        assert_eq!(h.mtime().unwrap(), 0);
        assert_eq!(h.uid().unwrap(), 0);
        assert_eq!(h.gid().unwrap(), 0);
        assert_eq!(h.username().unwrap(), Some(""));
        names.push(e.path().unwrap().to_str().unwrap().to_string());
    }
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "entries are sorted");
    // gzip header: no mtime (bytes 4..8 zero), no FNAME flag, OS byte 255.
    assert_eq!(&pa[4..8], &[0, 0, 0, 0]);
    assert_eq!(pa[3] & 0x08, 0);
    assert_eq!(pa[9], 255);
}

#[test]
fn pack_refuses_bad_paths() {
    for bad in ["/abs", "../up", "a//b", "./a"] {
        let mut f = ToolFiles::new();
        f.insert(bad, b"x".to_vec());
        let err = pack(&f).unwrap_err().to_string();
        assert!(err.contains(bad), "{err}");
    }
}

#[test]
fn long_paths_round_trip() {
    let mut f = ToolFiles::new();
    let long = format!("{}/file.txt", "d".repeat(150));
    f.insert(long.clone(), b"x".to_vec());
    let back = unpack(&pack(&f).unwrap(), &Limits::default()).unwrap();
    assert_eq!(back.get(&long), Some(&b"x"[..]));
}

#[test]
fn directory_entries_are_ignored() {
    let bytes = RawTar::new()
        .entry(b"src/", EntryType::Directory, b"")
        .file("src/a.ts", b"a")
        .gz();
    let files = unpack(&bytes, &Limits::default()).unwrap();
    assert_eq!(files.paths().collect::<Vec<_>>(), vec!["src/a.ts"]);
}

#[test]
fn absolute_paths_are_refused() {
    let err = bundle_err(
        &RawTar::new().file("/etc/passwd", b"x").gz(),
        &Limits::default(),
    );
    assert!(err.contains("`/etc/passwd` is an absolute path"), "{err}");
}

#[test]
fn parent_components_are_refused() {
    let err = bundle_err(
        &RawTar::new().file("a/../../b", b"x").gz(),
        &Limits::default(),
    );
    assert!(err.contains("`a/../../b` contains `..`"), "{err}");
}

#[test]
fn links_are_refused() {
    for kind in [EntryType::Symlink, EntryType::Link] {
        let err = bundle_err(
            &RawTar::new().entry(b"link", kind, b"").gz(),
            &Limits::default(),
        );
        assert!(err.contains("`link` is a link"), "{err}");
    }
}

#[test]
fn devices_and_fifos_are_refused() {
    for (kind, what) in [
        (EntryType::Char, "device"),
        (EntryType::Block, "device"),
        (EntryType::Fifo, "FIFO"),
    ] {
        let err = bundle_err(
            &RawTar::new().entry(b"dev", kind, b"").gz(),
            &Limits::default(),
        );
        assert!(err.contains(&format!("`dev` is a {what}")), "{err}");
    }
}

#[test]
fn non_utf8_names_are_refused() {
    let err = bundle_err(
        &RawTar::new()
            .entry(b"caf\xe9.txt", EntryType::Regular, b"x")
            .gz(),
        &Limits::default(),
    );
    assert!(err.contains("non-UTF-8 name"), "{err}");
}

#[test]
fn duplicate_entries_are_refused() {
    let err = bundle_err(
        &RawTar::new().file("a", b"1").file("a", b"2").gz(),
        &Limits::default(),
    );
    assert!(err.contains("duplicate entry `a`"), "{err}");
    let err = bundle_err(
        &RawTar::new().file("a", b"1").file("./a", b"2").gz(),
        &Limits::default(),
    );
    assert!(
        err.contains("duplicate entry `a` (as `a` and `./a`)"),
        "{err}"
    );
}

#[test]
fn too_many_entries_is_too_large() {
    let limits = Limits {
        max_entries: 3,
        ..Limits::default()
    };
    let mut t = RawTar::new();
    for i in 0..4 {
        t = t.file(&format!("f{i}"), b"x");
    }
    let err = unpack(&t.gz(), &limits).unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");
    assert!(err.to_string().contains("max_entries = 3"), "{err}");
    // Exactly at the limit is fine.
    let mut t = RawTar::new();
    for i in 0..3 {
        t = t.file(&format!("f{i}"), b"x");
    }
    assert_eq!(unpack(&t.gz(), &limits).unwrap().len(), 3);
}

#[test]
fn compressed_size_over_the_limit_is_too_large() {
    let bytes = pack(&sample()).unwrap();
    let limits = Limits {
        max_compressed: bytes.len() as u64 - 1,
        ..Limits::default()
    };
    let err = unpack(&bytes, &limits).unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");
    assert!(err.to_string().contains("max_compressed"), "{err}");
    let limits = Limits {
        max_compressed: bytes.len() as u64,
        ..Limits::default()
    };
    assert!(unpack(&bytes, &limits).is_ok());
}

#[test]
fn unpacked_size_over_the_limit_is_too_large() {
    let bytes = RawTar::new()
        .file("a", &[b'a'; 600])
        .file("b", &[b'b'; 600])
        .gz();
    let limits = Limits {
        max_unpacked: 1000,
        ..Limits::default()
    };
    let err = unpack(&bytes, &limits).unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");
    assert!(err.to_string().contains("max_unpacked = 1000"), "{err}");
    assert!(unpack(
        &bytes,
        &Limits {
            max_unpacked: 1200,
            ..Limits::default()
        }
    )
    .is_ok());
}

/// A gzip stream that claims a 1 GiB file and inflates to 100 MiB of zeros must
/// stop at the limit, quickly, without inflating everything.
#[test]
fn decompression_bomb_stops_at_the_limit() {
    let mut enc = GzEncoder::new(Vec::new(), Compression::best());
    // One header claiming a 1 GiB file, then zeros.
    let mut h = Header::new_gnu();
    h.set_path("bomb").unwrap();
    h.set_size(1 << 30);
    h.set_entry_type(EntryType::Regular);
    h.set_cksum();
    enc.write_all(h.as_bytes()).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..100 {
        enc.write_all(&zeros).unwrap();
    }
    let bomb = enc.finish().unwrap();
    assert!(bomb.len() < 10 * 1024 * 1024);
    let started = std::time::Instant::now();
    let err = unpack(&bomb, &Limits::default()).unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");
    assert!(err.to_string().contains("max_unpacked"), "{err}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
}

/// Same, but with a header that lies: many small-looking entries whose
/// stream keeps going (the stream itself is bounded, not just header sizes).
#[test]
fn stream_bomb_with_small_headers_stops_at_the_limit() {
    let mut t = RawTar::new();
    for i in 0..50 {
        t = t.file(&format!("f{i}"), &vec![b'x'; 100_000]);
    }
    let bytes = t.gz();
    let limits = Limits {
        max_unpacked: 1_000_000,
        ..Limits::default()
    };
    let err = unpack(&bytes, &limits).unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");
}

#[test]
fn a_path_cannot_be_both_file_and_directory() {
    let err = bundle_err(
        &RawTar::new().file("a", b"1").file("a/b", b"2").gz(),
        &Limits::default(),
    );
    assert!(
        err.contains("`a` is both a file and a directory (`a/b`)"),
        "{err}"
    );
    let mut f = ToolFiles::new();
    f.insert("x", b"1".to_vec());
    f.insert("x/y", b"2".to_vec());
    f.insert("x-z", b"3".to_vec());
    let err = pack(&f).unwrap_err().to_string();
    assert!(err.contains("`x` is both a file and a directory"), "{err}");
}

#[test]
fn garbage_is_a_bundle_error() {
    let err = unpack(b"not a gzip at all", &Limits::default()).unwrap_err();
    assert!(matches!(err, Error::Bundle(_)), "{err}");
}

/// A Matimo `http` definition, as in the reproduced attack.
const HTTP_YAML: &str = "name: ping\nversion: '1.0.0'\ndescription: Ping a URL.\nparameters:\n  url:\n    type: string\n    required: true\n    description: The URL\nexecution:\n  type: http\n  method: GET\n  url: '{url}'\n";

#[test]
fn names_a_file_system_folds_into_another_file_are_refused() {
    // Each case: the entries, then what the error must name.
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["definition.yaml", "definition.yaml.", "impl.ts"],
            &["`definition.yaml.`", "ends in `.`"],
        ),
        (&["tool.json::$DATA"], &["`tool.json::$DATA`", "`:`"]),
        (&["README.md "], &["`README.md `", "ends in a space"]),
        (
            &["docs/NUL.txt"],
            &["`docs/NUL.txt`", "Windows device name `NUL`"],
        ),
        (&["com7.md"], &["Windows device name `COM7`"]),
        (&["bell\u{7}.md"], &["U+0007"]),
        (
            &["tool.json", "Tool.Json"],
            &["`tool.json`", "`Tool.Json`", "case folding"],
        ),
        (&["café.md", "cafe\u{301}.md"], &["Unicode normalization"]),
    ];
    for (names, needles) in cases {
        let mut raw = RawTar::new();
        let mut files = ToolFiles::new();
        for n in *names {
            raw = raw.file(n, HTTP_YAML.as_bytes());
            files.insert(*n, HTTP_YAML.as_bytes().to_vec());
        }
        let unpacked = bundle_err(&raw.gz(), &Limits::default());
        let packed = pack(&files).unwrap_err().to_string();
        for err in [&unpacked, &packed] {
            for needle in *needles {
                assert!(err.contains(needle), "{names:?}: `{needle}` not in {err}");
            }
        }
    }
}

#[test]
fn a_no_code_bundle_with_code_or_other_definitions_does_not_load() {
    let tool_json =
        br#"{"name":"get_weather","description":"Weather","inputSchema":{"type":"object"}}"#;
    let bytes = RawTar::new()
        .file("tool.json", tool_json)
        .file("toolreg.toml", b"[tool]\nversion = \"1.0.0\"\n")
        .file("METADATA.JSON", b"{\"name\": \"x\"}")
        .file("TOOL.TS", b"export default 1;\n")
        .file("tool.py", b"print(1)\n")
        .file("docs/usage.md", b"# Usage\n")
        .gz();
    let files = unpack(&bytes, &Limits::default()).unwrap();
    let err = toolreg_core::load(&files).unwrap_err();
    let problems: Vec<(&str, &str)> = err
        .problems()
        .iter()
        .map(|p| (p.path.as_str(), p.message.as_str()))
        .collect();
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(
        problems[0].0 == "METADATA.JSON" && problems[0].1.contains("`shinkai` definition file")
    );
    assert!(problems[1].0 == "TOOL.TS" && problems[1].1.contains("code file"));
    assert!(problems[2].0 == "tool.py" && problems[2].1.contains("`schema` tool runs no code"));
}
