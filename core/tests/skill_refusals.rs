//! What a skill directory may not be, each refused by `load` with the
//! field or file named, and the quirks of real skills that are accepted
//! with a warning. The directories are written in the test (a real skill's
//! text where one matters, injected with the fault).

use std::path::Path;

use toolreg_core::{load, Error, Loaded, Problem, ToolFiles};

const GOOD: &str = "---\nname: tidy-notes\ndescription: Tidies a folder of Markdown notes. Use when notes need sorting.\nlicense: MIT\nmetadata:\n  version: \"1.2.0\"\n---\n# Tidy notes\n\nSort the notes by date.\n";

fn skill(text: &str) -> ToolFiles {
    let mut files = ToolFiles::new();
    files.insert("SKILL.md", text.as_bytes().to_vec());
    files
}

fn refused(files: &ToolFiles) -> Vec<Problem> {
    match load(files) {
        Ok(l) => panic!("expected a refusal, loaded {}", l.tool.registry_name),
        Err(Error::Invalid(problems)) => problems,
        Err(other) => panic!("expected Error::Invalid, got {other}"),
    }
}

fn at<'a>(problems: &'a [Problem], path: &str) -> &'a Problem {
    problems
        .iter()
        .find(|p| p.path == path)
        .unwrap_or_else(|| panic!("no problem at `{path}` in {problems:#?}"))
}

fn loads(files: &ToolFiles) -> Loaded {
    load(files).unwrap_or_else(|e| panic!("should load: {:#?}", e.problems()))
}

#[test]
fn a_good_skill_loads() {
    let loaded = loads(&skill(GOOD));
    assert_eq!(loaded.tool.registry_name, "tidy-notes");
    assert_eq!(loaded.tool.version.to_string(), "1.2.0");
    assert!(loaded.warnings.is_empty(), "{:#?}", loaded.warnings);
}

#[test]
fn the_name_must_be_the_directory_name() {
    // On disk: the directory's own name.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("notes-tidier");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), GOOD).unwrap();
    let files = ToolFiles::read_dir(&dir).unwrap();
    assert_eq!(files.dir_name(), Some("notes-tidier"));
    let ps = refused(&files);
    let p = at(&ps, "name");
    assert!(
        p.message.contains("`tidy-notes`") && p.message.contains("`notes-tidier`"),
        "{p:?}"
    );
    assert!(p.message.contains("directory name"), "{p:?}");

    // Renamed to match, it loads; `.` is read under its real name.
    let right = tmp.path().join("tidy-notes");
    std::fs::rename(&dir, &right).unwrap();
    assert_eq!(
        loads(&ToolFiles::read_dir(&right).unwrap()).tool.call_name,
        "tidy-notes"
    );
    let dotted = right.join(".");
    assert_eq!(
        ToolFiles::read_dir(&dotted).unwrap().dir_name(),
        Some("tidy-notes")
    );

    // In a bundle there is no directory: toolreg.toml's name stands for it.
    let mut files = skill(GOOD);
    files.insert("toolreg.toml", "[tool]\nname = \"other-name\"\n");
    let ps = refused(&files);
    let p = at(&ps, "name");
    assert!(
        p.message.contains("`tidy-notes`")
            && p.message.contains("`other-name`")
            && p.message.contains("[tool].name"),
        "{p:?}"
    );
    let mut files = skill(GOOD);
    files.insert("toolreg.toml", "[tool]\nname = \"tidy-notes\"\n");
    loads(&files);
    // Both known: both must agree, or the server would refuse what
    // `toolreg validate` accepted.
    std::fs::write(
        right.join("toolreg.toml"),
        "[tool]\nname = \"other-name\"\n",
    )
    .unwrap();
    let ps = refused(&ToolFiles::read_dir(&right).unwrap());
    assert!(at(&ps, "name").message.contains("`other-name`"), "{ps:?}");
    // The directory name is not part of what two directories compare by.
    let mut named = skill(GOOD);
    named.set_dir_name(Some("x".into()));
    assert_eq!(named, skill(GOOD));
}

#[test]
fn metadata_versions_that_are_not_semver() {
    let with_version = |v: &str| GOOD.replace("version: \"1.2.0\"", &format!("version: {v}"));
    for (written, read) in [("\"1.3\"", "1.3.0"), ("\"2\"", "2.0.0"), ("7", "7.0.0")] {
        let loaded = loads(&skill(&with_version(written)));
        assert_eq!(loaded.tool.version.to_string(), read, "{written}");
        let w = loaded
            .warnings
            .iter()
            .find(|w| w.path == "metadata.version")
            .unwrap_or_else(|| panic!("{written}: no warning in {:#?}", loaded.warnings));
        assert!(w.message.contains(read), "{w:?}");
    }
    // Not completable: refused, naming the field and the toolreg.toml fix.
    for written in ["\"v1.3-beta\"", "\"1.2.3.4\"", "1.10", "\"01.2\"", "[1, 2]"] {
        let ps = refused(&skill(&with_version(written)));
        let p = at(&ps, "metadata.version");
        assert!(
            p.fix.as_deref().unwrap_or("").contains("[tool].version"),
            "{written}: {p:?}"
        );
        assert_eq!(ps.len(), 1, "{written}: one problem, not two: {ps:#?}");
    }
    // ... unless toolreg.toml gives the version.
    let mut files = skill(&with_version("\"v1.3-beta\""));
    files.insert("toolreg.toml", "[tool]\nversion = \"1.3.0-beta\"\n");
    assert_eq!(loads(&files).tool.version.to_string(), "1.3.0-beta");
    // No version anywhere: the existing error, naming toolreg.toml.
    let ps = refused(&skill(
        &GOOD.replace("metadata:\n  version: \"1.2.0\"\n", ""),
    ));
    assert!(at(&ps, "version")
        .fix
        .as_deref()
        .unwrap_or("")
        .contains("toolreg.toml"));
}

#[test]
fn no_skill_md_or_two_of_them() {
    // Only a lowercase skill.md: named, with the fix.
    let mut files = ToolFiles::new();
    files.insert("skill.md", GOOD.as_bytes().to_vec());
    let ps = refused(&files);
    let p = at(&ps, "skill.md");
    assert!(p.message.contains("`SKILL.md` exactly"), "{p:?}");
    // Nothing at all.
    let mut files = ToolFiles::new();
    files.insert("README.md", b"# hi\n".to_vec());
    let ps = refused(&files);
    assert!(ps[0].message.contains("`SKILL.md`"), "{ps:?}");

    // SKILL.md beside skill.md, and one in a subfolder: each named.
    let mut files = skill(GOOD);
    files.insert("skill.md", GOOD.as_bytes().to_vec());
    files.insert("examples/other/SKILL.md", GOOD.as_bytes().to_vec());
    let ps = refused(&files);
    for path in ["skill.md", "examples/other/SKILL.md"] {
        assert!(
            at(&ps, path).message.contains("second `SKILL.md`"),
            "{ps:#?}"
        );
    }
    // A reference file merely mentioning skills is fine.
    let mut files = skill(GOOD);
    files.insert("references/SKILL-GUIDE.md", b"# guide\n".to_vec());
    loads(&files);
}

#[test]
fn frontmatter_not_at_the_top_or_not_yaml() {
    let ps = refused(&skill(&format!("\n{GOOD}")));
    assert!(at(&ps, "SKILL.md").message.contains("`---`"), "{ps:?}");
    let ps = refused(&skill(&format!("# Title\n{GOOD}")));
    assert!(at(&ps, "SKILL.md").message.contains("`---`"), "{ps:?}");
    let ps = refused(&skill("---\nname: tidy-notes\ndescription: a: b: c\n---\n"));
    assert!(
        at(&ps, "SKILL.md").message.contains("not valid YAML"),
        "{ps:?}"
    );
}

#[test]
fn oversize_fields_and_files() {
    let long_name = "a".repeat(65);
    let ps = refused(&skill(
        &GOOD.replace("name: tidy-notes", &format!("name: {long_name}")),
    ));
    assert!(at(&ps, "name").message.contains("at most 64"), "{ps:?}");

    // 20 MB: refused by the size cap, which the error states.
    let huge = format!(
        "{GOOD}{}",
        "Sort the notes.\n".repeat(20 * 1024 * 1024 / 16)
    );
    let ps = refused(&skill(&huge));
    let p = at(&ps, "SKILL.md");
    assert!(p.message.contains("1048576 bytes (1 MiB)"), "{p:?}");
    // Just under the cap: accepted, with the advice on length.
    let big = format!("{GOOD}{}", "Sort the notes.\n".repeat(60_000));
    assert!(big.len() < 1024 * 1024);
    let loaded = loads(&skill(&big));
    assert!(loaded.warnings.iter().any(|w| w.path == "SKILL.md"));
}

#[test]
fn a_byte_order_mark_is_read_with_a_warning() {
    let loaded = loads(&skill(&format!("\u{feff}{GOOD}")));
    let w = loaded
        .warnings
        .iter()
        .find(|w| w.path == "SKILL.md")
        .unwrap();
    assert!(w.message.contains("byte order mark"), "{w:?}");
}

#[cfg(unix)]
#[test]
fn a_link_out_of_the_skill_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tidy-notes");
    std::fs::create_dir_all(dir.join("references")).unwrap();
    std::fs::write(dir.join("SKILL.md"), GOOD).unwrap();
    std::os::unix::fs::symlink(Path::new("/etc/passwd"), dir.join("references/notes.md")).unwrap();
    let err = ToolFiles::read_dir(&dir).unwrap_err().to_string();
    assert!(
        err.contains("references/notes.md") && err.contains("link"),
        "{err}"
    );
}
