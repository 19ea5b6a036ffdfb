//! The body of every toolreg-core fuzz target, in one place.
//!
//! Each `fuzz_targets/<target>.rs` is a one-line libFuzzer wrapper around one
//! of these functions, and `core/tests/fuzz_regressions.rs` includes this very
//! file (`#[path]`) to replay every seed and every saved crash through the same
//! code on the stable toolchain. So a crash fixed once stays fixed: CI runs it
//! as an ordinary test.
//!
//! Besides "no panic, no hang, bounded memory" (enforced by libFuzzer's
//! `-timeout` and `-rss_limit_mb`), the targets check a few invariants that
//! make errors useful: a refused definition names at least one problem, and a
//! tool that loads can be exported to MCP and OpenAI.

use std::io::Write;

use toolreg_core::bundle::{unpack, Limits};
use toolreg_core::export::{export, ExportFormat};
use toolreg_core::formats::load_file;
use toolreg_core::manifest::ToolToml;
use toolreg_core::{load, Error, ToolFiles};

/// The body of a fuzz target: one input, no result (failure is a panic).
pub type Target = fn(&[u8]);

/// Every target, by name, as `scripts/fuzz` and the regression test know them.
pub const CORE_TARGETS: &[(&str, Target)] = &[
    ("matimo_yaml", matimo_yaml),
    ("shinkai_json", shinkai_json),
    ("mcp_json", mcp_json),
    ("prompt_json", prompt_json),
    ("toolreg_toml", toolreg_toml),
    ("bundle_unpack", bundle_unpack),
    ("semver_req", semver_req),
    ("skill_md", skill_md),
];

/// A Matimo `definition.yaml`, loaded alone.
pub fn matimo_yaml(data: &[u8]) {
    load_definition("definition.yaml", data);
}

/// A Shinkai `metadata.json`, loaded alone.
pub fn shinkai_json(data: &[u8]) {
    load_definition("metadata.json", data);
}

/// An MCP `tool.json`, loaded alone.
pub fn mcp_json(data: &[u8]) {
    load_definition("tool.json", data);
}

/// A prompt-format `prompt.json`, loaded alone.
pub fn prompt_json(data: &[u8]) {
    load_definition("prompt.json", data);
}

/// An Agent Skill's `SKILL.md`: its frontmatter split off and parsed
/// (under the parser's YAML budget), its hidden Markdown parts listed, then
/// loaded alone (frontmatter checks, the version, the lint of the body).
/// The hidden parts must lie inside the text, on char boundaries, with
/// their lines in order; a loaded skill exports as itself only.
pub fn skill_md(data: &[u8]) {
    use toolreg_core::formats::skill;
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(split) = skill::split(text) {
            assert!(
                split.body_line >= 3,
                "the body starts after two `---` lines"
            );
            let _ = skill::parse_frontmatter(text);
        }
        let lines = text.lines().count().max(1) + 1;
        for part in skill::hidden_parts(text) {
            for r in [&part.range, &part.text] {
                assert!(r.start <= r.end && r.end <= text.len(), "{part:?}");
                assert!(
                    text.is_char_boundary(r.start) && text.is_char_boundary(r.end),
                    "{part:?}"
                );
            }
            assert!(
                part.range.start <= part.text.start && part.text.end <= part.range.end,
                "{part:?}"
            );
            assert!(
                1 <= part.first_line
                    && part.first_line <= part.last_line
                    && part.last_line <= lines,
                "{part:?}"
            );
        }
    }
    match load_file("SKILL.md", data) {
        Ok(loaded) => {
            let tool = &loaded.tool;
            assert!(export(tool, ExportFormat::Native).is_ok());
            assert!(
                export(tool, ExportFormat::Mcp).is_err(),
                "a skill is no function"
            );
        }
        Err(e) => refusal_is_explained(&e),
    }
}

/// Load one definition file; a loaded tool must export to every format that
/// can hold it without panicking, and a refusal must name a problem.
fn load_definition(file: &str, data: &[u8]) {
    match load_file(file, data) {
        Ok(loaded) => exports_hold(&loaded.tool),
        Err(e) => refusal_is_explained(&e),
    }
}

fn exports_hold(tool: &toolreg_core::Tool) {
    for format in [
        ExportFormat::Mcp,
        ExportFormat::Openai,
        ExportFormat::Native,
    ] {
        if let Err(e) = export(tool, format) {
            panic!("a loaded tool must export as {}: {e}", format.as_str());
        }
    }
    // Matimo can't hold every tool (schema and prompt tools have no execution
    // block); a refusal is fine, a panic is not.
    let _ = export(tool, ExportFormat::Matimo);
}

fn refusal_is_explained(e: &Error) {
    if let Error::Invalid(problems) = e {
        assert!(
            !problems.is_empty(),
            "an invalid definition must name at least one problem"
        );
    }
    assert!(!e.to_string().is_empty());
}

/// A `toolreg.toml`: parsed alone, then applied to a minimal MCP tool.
pub fn toolreg_toml(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(problems) = ToolToml::parse(text) {
            assert!(
                !problems.is_empty(),
                "a refused toolreg.toml must name a problem"
            );
        }
    }
    let mut files = ToolFiles::new();
    files.insert(
        "tool.json",
        br#"{"name":"fuzz_tool","description":"d","inputSchema":{"type":"object"}}"#.to_vec(),
    );
    files.insert("toolreg.toml", data.to_vec());
    match load(&files) {
        Ok(loaded) => exports_hold(&loaded.tool),
        Err(e) => refusal_is_explained(&e),
    }
}

/// A bundle as the server receives it: unpacked within the default limits,
/// then loaded. Input that isn't gzip is also gzip'd first, so the fuzzer
/// can reach the tar layer (random bytes rarely pass gzip's CRC check).
pub fn bundle_unpack(data: &[u8]) {
    unpack_and_load(data);
    if !data.starts_with(&[0x1f, 0x8b]) {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        if gz.write_all(data).is_ok() {
            if let Ok(bytes) = gz.finish() {
                unpack_and_load(&bytes);
            }
        }
    }
}

/// Whatever unpacks stays within the limits; whatever is refused says why.
fn unpack_and_load(bundle: &[u8]) {
    let limits = Limits::default();
    let files = match unpack(bundle, &limits) {
        Ok(files) => files,
        Err(e) => return refusal_is_explained(&e),
    };
    assert!(files.len() <= limits.max_entries);
    assert!(files.total_size() <= limits.max_unpacked);
    match load(&files) {
        Ok(loaded) => exports_hold(&loaded.tool),
        Err(e) => refusal_is_explained(&e),
    }
}

/// Versions every requirement is matched against, besides those in the input.
const VERSIONS: &[&str] = &[
    "0.0.0",
    "0.1.0",
    "1.0.0-alpha.1",
    "1.2.3",
    "1.2.3+build.5",
    "2.0.0",
    "18446744073709551615.0.0",
];

/// A SemVer requirement as `GET /api/v1/resolve/{name}?req=` handles it:
/// the first line is parsed with `semver::VersionReq::parse`, then matched
/// against stored versions (the other lines and a fixed list) parsed with
/// `semver::Version::parse`, exactly like the server's resolve controller.
pub fn semver_req(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (req_text, rest) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(req) = semver::VersionReq::parse(req_text) else {
        return;
    };
    // A parsed requirement prints as something that parses back the same.
    let shown = req.to_string();
    let again = semver::VersionReq::parse(&shown)
        .unwrap_or_else(|e| panic!("`{shown}` (from `{req_text}`) must parse again: {e}"));
    for v in VERSIONS.iter().copied().chain(rest.lines()) {
        if let Ok(version) = semver::Version::parse(v) {
            assert_eq!(
                req.matches(&version),
                again.matches(&version),
                "`{req_text}` vs `{shown}` on {v}"
            );
        }
    }
}
