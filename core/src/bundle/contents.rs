//! What a bundle may carry, by execution kind.
//!
//! A tool whose kind runs no code from its bundle (`http`, `prompt`,
//! `schema`, `command`) carries only its definition, `toolreg.toml`,
//! `README*`, `LICENSE*`, `CHANGELOG*`, icons (images at the root), and text
//! files under `docs/` or `examples/`. Anything else — a code file, or
//! another format's definition file that a loader would pick up instead —
//! could be run by a consumer that trusted the tool for its kind. Names are
//! compared case-insensitively: on a case-insensitive file system
//! `METADATA.JSON` *is* `metadata.json`, and `TOOL.TS` is `tool.ts`.
//!
//! Tools that run bundle code (`function`, `script`) may carry any files; the
//! tier policy already requires a trusted publisher for them.

use super::names::fold_key;
use crate::error::Problem;
use crate::files::ToolFiles;
use crate::manifest;
use crate::model::Format;
use crate::policy::ExecutionKind;

/// Extensions of files that hold code some runtime may load or run.
const CODE_EXTENSIONS: &[&str] = &[
    "js",
    "mjs",
    "cjs",
    "jsx",
    "ts",
    "mts",
    "cts",
    "tsx",
    "py",
    "pyw",
    "pyc",
    "pyo",
    "pyz",
    "ipynb",
    "sh",
    "bash",
    "zsh",
    "fish",
    "ksh",
    "csh",
    "ps1",
    "psm1",
    "psd1",
    "bat",
    "cmd",
    "com",
    "exe",
    "dll",
    "so",
    "dylib",
    "wasm",
    "jar",
    "class",
    "rb",
    "pl",
    "pm",
    "php",
    "lua",
    "go",
    "rs",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "java",
    "kt",
    "kts",
    "scala",
    "swift",
    "cs",
    "vbs",
    "r",
    "jl",
    "ex",
    "exs",
    "erl",
    "hs",
    "clj",
    "groovy",
    "applescript",
    "scpt",
    "mdx",
    "html",
    "htm",
    "xhtml",
];

/// Extensions of archives, which may unpack to code.
const ARCHIVE_EXTENSIONS: &[&str] = &[
    "zip", "gz", "tgz", "tar", "bz2", "xz", "7z", "rar", "whl", "egg",
];

/// True when `path` (relative to the bundle root) holds code: a code or
/// archive extension, or any file under a top-level `scripts/` directory
/// (where skills keep executables that often have no extension). Compared
/// in any letter case.
pub fn is_code_path(path: &str) -> bool {
    let lower = fold_key(path);
    let file = lower.rsplit('/').next().unwrap_or(&lower);
    let ext = file.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    lower.starts_with("scripts/")
        || CODE_EXTENSIONS.contains(&ext)
        || ARCHIVE_EXTENSIONS.contains(&ext)
}

/// Extensions of icon images accepted at the bundle root.
const ICON_EXTENSIONS: &[&str] = &["png", "svg", "jpg", "jpeg", "gif", "webp", "ico", "avif"];

/// Extensions of the text files accepted under `docs/` and `examples/`.
const TEXT_EXTENSIONS: &[&str] = &[
    "md", "markdown", "txt", "text", "rst", "adoc", "asciidoc", "org", "json", "jsonl", "ndjson",
    "yaml", "yml", "toml", "csv", "tsv", "xml",
];

/// Root file name prefixes (compared case-insensitively) that are always allowed.
const DOC_PREFIXES: &[&str] = &["readme", "license", "changelog"];

/// Directories (compared case-insensitively) that may hold text files.
const TEXT_DIRS: &[&str] = &["docs", "examples"];

/// What a no-code bundle may carry, for messages.
const ALLOWED: &str = "its definition, toolreg.toml, README*, LICENSE*, CHANGELOG*, an icon, \
                       and text files under docs/ or examples/";

/// Check that a tool of `kind`, defined by `definition_file`, carries only
/// the files its kind allows; one [`Problem`] per file that it may not carry.
pub fn check(kind: ExecutionKind, definition_file: &str, files: &ToolFiles) -> Vec<Problem> {
    if kind.runs_bundle_code() {
        return Vec::new();
    }
    files
        .iter()
        .filter_map(|(path, bytes)| {
            let why = refusal(definition_file, path, bytes)?;
            Some(
                Problem::new(
                    path,
                    format!(
                        "{why}; a `{kind}` tool runs no code from its bundle, so it may carry only {ALLOWED}"
                    ),
                )
                .with_fix(format!(
                    "remove `{path}` from the tool directory (text documentation goes under docs/)"
                )),
            )
        })
        .collect()
}

/// Why `path` may not be in a no-code bundle, or `None` if it may.
fn refusal(definition_file: &str, path: &str, bytes: &[u8]) -> Option<String> {
    if path == definition_file || path == manifest::FILE_NAME {
        return None;
    }
    // Folded as a case-insensitive file system would (`metadata.jſon` is
    // `METADATA.JSON` on NTFS), so the lists below are matched in lowercase.
    let lower = fold_key(path);
    let (dir, file) = match lower.split_once('/') {
        Some((dir, rest)) => (Some(dir), rest.rsplit('/').next().unwrap_or(rest)),
        None => (None, lower.as_str()),
    };
    let ext = file.rsplit_once('.').map(|(_, e)| e).unwrap_or("");

    if dir.is_none() {
        if let Some(format) = Format::ALL
            .into_iter()
            .find(|f| f.file_names().contains(&file))
        {
            return Some(if format.file_names().contains(&definition_file) {
                format!(
                    "is a second `{format}` definition file beside `{definition_file}` \
                     (names are compared in any letter case)"
                )
            } else {
                format!(
                    "is a `{format}` definition file (names are compared in any letter case), \
                     which a `{format}` loader would read instead of `{definition_file}`"
                )
            });
        }
        if file == manifest::FILE_NAME {
            return Some(format!(
                "differs from `{}` only in letter case",
                manifest::FILE_NAME
            ));
        }
    }
    if CODE_EXTENSIONS.contains(&ext) {
        return Some(format!("is a code file (`.{ext}`)"));
    }
    match dir {
        None if DOC_PREFIXES.iter().any(|p| file.starts_with(p)) => None,
        None if ICON_EXTENSIONS.contains(&ext) => None,
        Some(d) if TEXT_DIRS.contains(&d) => {
            if !TEXT_EXTENSIONS.contains(&ext) {
                Some(format!(
                    "is not a text file of a known kind (use one of .{})",
                    TEXT_EXTENSIONS.join(", .")
                ))
            } else if std::str::from_utf8(bytes).is_err() || bytes.contains(&0) {
                Some("is not UTF-8 text".to_string())
            } else {
                None
            }
        }
        _ => Some("is not one of the files this kind of tool may carry".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(paths: &[&str]) -> ToolFiles {
        let mut f = ToolFiles::new();
        for p in paths {
            f.insert(*p, b"text\n".to_vec());
        }
        f
    }

    fn refused(kind: ExecutionKind, def: &str, paths: &[&str]) -> Vec<String> {
        check(kind, def, &files(paths))
            .into_iter()
            .map(|p| p.path)
            .collect()
    }

    #[test]
    fn no_code_bundles_carry_only_the_listed_files() {
        let ok = [
            "tool.json",
            "toolreg.toml",
            "README.md",
            "readme",
            "LICENSE-MIT",
            "License.txt",
            "CHANGELOG.md",
            "icon.png",
            "logo-dark.SVG",
            "docs/usage.md",
            "Docs/deep/more.txt",
            "examples/request.json",
            "EXAMPLES/a.yaml",
        ];
        assert!(refused(ExecutionKind::Schema, "tool.json", &ok).is_empty());
    }

    #[test]
    fn code_and_other_definitions_are_refused_in_any_case() {
        let bad = refused(
            ExecutionKind::Schema,
            "tool.json",
            &[
                "tool.json",
                "METADATA.JSON",
                "TOOL.TS",
                "tool.py",
                "Definition.YML",
            ],
        );
        assert_eq!(
            bad,
            ["Definition.YML", "METADATA.JSON", "TOOL.TS", "tool.py"]
        );
        for kind in [
            ExecutionKind::Http,
            ExecutionKind::Prompt,
            ExecutionKind::Command,
        ] {
            let bad = refused(
                kind,
                "definition.yaml",
                &[
                    "definition.yaml",
                    "README.ts",
                    "docs/run.sh",
                    "examples/x.bin",
                    "src/index.js",
                    "notes.txt",
                    "TOOLREG.TOML",
                    "definition.yml",
                ],
            );
            assert_eq!(bad.len(), 7, "{kind}: {bad:?}");
        }
    }

    #[test]
    fn binary_text_files_are_refused() {
        let mut f = files(&["tool.json"]);
        f.insert("docs/a.md", vec![0xff, 0xfe, 0]);
        let problems = check(ExecutionKind::Schema, "tool.json", &f);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].message.contains("UTF-8"), "{problems:?}");
    }

    #[test]
    fn code_running_kinds_carry_anything() {
        for kind in [ExecutionKind::Function, ExecutionKind::Script] {
            assert!(refused(
                kind,
                "metadata.json",
                &["metadata.json", "tool.ts", "x.bin"]
            )
            .is_empty());
        }
    }
}
