//! Agent Skills for the server's tests: the real skills beside the
//! repository (`../shared/skills`, read at test time), each packed as a
//! bundle with a `toolreg.toml` giving the version (real skills often
//! carry none, or a non-SemVer one), and small hand-written skills.

use std::path::{Path, PathBuf};

use toolreg_core::ToolFiles;

/// One row of the skills' SOURCES.md table: folder, kind, SPDX license.
pub struct RealSkill {
    pub name: String,
    /// `prompt` or `script`.
    pub kind: String,
    pub license: String,
}

/// The real skills, or `None` (skipped) when they are not there.
pub fn real_skills() -> Option<(PathBuf, Vec<RealSkill>)> {
    let root = toolreg_test_support::skills()?;
    let text = std::fs::read_to_string(root.join("SOURCES.md")).expect("read SOURCES.md");
    let rows: Vec<RealSkill> = text
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let kind = *cells.get(2)?;
            (kind == "script" || kind == "prompt").then(|| RealSkill {
                name: cells[1].to_string(),
                kind: kind.to_string(),
                license: cells[3].to_string(),
            })
        })
        .collect();
    assert_eq!(rows.len(), 29, "SOURCES.md lists every skill");
    Some((root, rows))
}

/// The files of the real skill `name` plus a `toolreg.toml` with `version`
/// and `license`.
pub fn real_skill_files(root: &Path, name: &str, version: &str, license: &str) -> ToolFiles {
    let mut files = ToolFiles::read_dir(&root.join(name)).expect("read the skill's folder");
    files.insert(
        "toolreg.toml",
        format!("[tool]\nname = \"{name}\"\nversion = \"{version}\"\nlicense = \"{license}\"\n"),
    );
    files
}

/// A small skill `name` at `version` whose body is `body`.
pub fn skill_files(name: &str, version: &str, body: &str) -> ToolFiles {
    let mut files = ToolFiles::new();
    files.insert(
        "SKILL.md",
        format!(
            "---\nname: {name}\ndescription: Tidies {name} notes. Use when notes are messy.\nlicense: MIT\n\
             compatibility: Needs git\nallowed-tools: Bash Read\nmetadata:\n  author: tester\n  \
             version: \"{version}\"\n---\n{body}\n"
        ),
    );
    files
}

/// Pack `files` the way `toolreg pack` does.
pub fn pack(files: &ToolFiles) -> Vec<u8> {
    toolreg_core::bundle::pack(files).expect("pack the skill")
}

/// The entries of a discovery archive (a `.tar.gz`) by path, asserting
/// the layout skill clients read: plain ustar regular-file entries, no
/// leading folder, `SKILL.md` at the root.
pub fn read_archive(bytes: &[u8]) -> ToolFiles {
    use std::io::Read;
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut tar)
        .expect("gunzip the archive");
    let mut files = ToolFiles::new();
    let mut archive = tar::Archive::new(tar.as_slice());
    for entry in archive.entries().expect("tar entries") {
        let mut entry = entry.expect("tar entry");
        let header = entry.header();
        assert!(header.as_ustar().is_some(), "a ustar header");
        assert_eq!(header.entry_type(), tar::EntryType::Regular);
        let raw_name = &header.as_bytes()[..100];
        assert!(
            !raw_name.starts_with(b"./") && !raw_name.starts_with(b"/"),
            "paths are relative to the root"
        );
        let path = entry.path().expect("path").to_string_lossy().into_owned();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).expect("read entry");
        files.insert(path.as_str(), bytes);
    }
    assert!(files.get("SKILL.md").is_some(), "SKILL.md at the root");
    files
}
