//! Every real Agent Skill (`../shared/skills`) loads as format `skill` with
//! the kind its files call for, and broken `SKILL.md` files are refused with
//! every problem named at once.

use std::path::Path;

use toolreg_core::bundle::{pack, unpack, Limits};
use toolreg_core::export::{export, ExportFormat};
use toolreg_core::{load, ExecutionKind, Format, ToolFiles};

/// (folder, kind, license) rows of the skills' SOURCES.md table.
fn table(root: &Path) -> Vec<(String, ExecutionKind, String)> {
    let text = std::fs::read_to_string(root.join("SOURCES.md")).unwrap();
    text.lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let kind = match *cells.get(2)? {
                "script" => ExecutionKind::Script,
                "prompt" => ExecutionKind::Prompt,
                _ => return None,
            };
            Some((cells[1].to_string(), kind, cells[3].to_string()))
        })
        .collect()
}

fn with_toml(root: &Path, name: &str, license: &str) -> ToolFiles {
    let mut files = ToolFiles::read_dir(&root.join(name)).unwrap();
    files.insert(
        "toolreg.toml",
        format!("[tool]\nname = \"{name}\"\nversion = \"1.0.0\"\nlicense = \"{license}\"\n"),
    );
    files
}

#[test]
fn every_real_skill_loads_with_its_kind() {
    let Some(root) = toolreg_test_support::skills() else {
        return;
    };
    let rows = table(&root);
    assert_eq!(rows.len(), 29, "the table lists every skill");
    for (name, kind, license) in &rows {
        let loaded = load(&with_toml(&root, name, license))
            .unwrap_or_else(|e| panic!("{name} should load: {:#?}", e.problems()));
        let tool = &loaded.tool;
        assert_eq!(tool.format, Format::Skill, "{name}");
        assert_eq!(tool.definition_file, "SKILL.md", "{name}");
        assert_eq!(tool.execution.kind, *kind, "{name}");
        assert_eq!(tool.registry_name, *name, "{name}");
        assert_eq!(
            tool.call_name, *name,
            "{name}: the frontmatter name is the folder name"
        );
        assert!(!tool.description.is_empty(), "{name}");
        assert!(
            tool.extensions["skill"]["frontmatter"].is_object(),
            "{name}"
        );
        let original = std::fs::read(root.join(name).join("SKILL.md")).unwrap();
        assert_eq!(tool.original, original, "{name}: kept byte for byte");

        // As the server reads it: from a bundle, with no directory, the
        // registry name of toolreg.toml standing for the folder.
        let files = with_toml(&root, name, license);
        let bundle = pack(&files).unwrap();
        let unpacked = unpack(&bundle, &Limits::default()).unwrap();
        assert_eq!(unpacked.dir_name(), None);
        let again = load(&unpacked).unwrap_or_else(|e| panic!("{name} from a bundle: {e}"));
        assert_eq!(again.tool, loaded.tool, "{name}");
    }
}

#[test]
fn quirks_of_real_skills() {
    let Some(root) = toolreg_test_support::skills() else {
        return;
    };
    // A version in metadata that is SemVer is used as is.
    let files = ToolFiles::read_dir(&root.join("vercel-cli-with-tokens")).unwrap();
    let loaded = load(&files).unwrap();
    assert_eq!(loaded.tool.version.to_string(), "1.0.0");
    assert_eq!(loaded.tool.execution.kind, ExecutionKind::Prompt);

    // `metadata.version: "1.3"` is completed to 1.3.0 with a warning naming
    // the field; the unknown key and the list under metadata are warnings.
    let files = ToolFiles::read_dir(&root.join("acquire-codebase-knowledge")).unwrap();
    assert_eq!(files.dir_name(), Some("acquire-codebase-knowledge"));
    let loaded = load(&files).unwrap();
    assert_eq!(loaded.tool.version.to_string(), "1.3.0");
    let warning = |path: &str| {
        loaded
            .warnings
            .iter()
            .find(|w| w.path == path)
            .unwrap_or_else(|| panic!("no warning at {path}: {:#?}", loaded.warnings))
            .message
            .clone()
    };
    assert!(warning("metadata.version").contains("`1.3`"));
    assert!(warning("metadata.version").contains("1.3.0"));
    assert!(warning("argument-hint").contains("not a key"));
    assert!(warning("metadata.enhancements").contains("array"));
    // ... and toolreg.toml's version wins, still warning about the other.
    let loaded = load(&with_toml(&root, "acquire-codebase-knowledge", "MIT")).unwrap();
    assert_eq!(loaded.tool.version.to_string(), "1.0.0");
    let w = loaded
        .warnings
        .iter()
        .find(|w| w.path == "metadata.version")
        .expect("a warning about metadata.version");
    assert!(
        w.message.contains("toolreg.toml's version `1.0.0`"),
        "{w:?}"
    );

    // The largest SKILL.md (294 KB, 2,738 lines) is under the size cap,
    // with the specification's advice on length as a warning.
    let loaded = load(&with_toml(&root, "quality-playbook", "Apache-2.0")).unwrap();
    assert!(loaded.tool.original.len() > 290_000);
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.path == "SKILL.md" && w.message.contains("2738 lines")),
        "{:#?}",
        loaded.warnings
    );

    // Code only by being under scripts/ (no extension) makes a script skill.
    let loaded = load(&with_toml(&root, "subagent-driven-development", "MIT")).unwrap();
    assert_eq!(loaded.tool.execution.kind, ExecutionKind::Script);
}

#[test]
fn a_skill_does_not_export_to_function_formats() {
    let Some(root) = toolreg_test_support::skills() else {
        return;
    };
    let tool = load(&with_toml(&root, "git-commit", "MIT")).unwrap().tool;
    for format in [
        ExportFormat::Mcp,
        ExportFormat::Openai,
        ExportFormat::Matimo,
    ] {
        let err = export(&tool, format).unwrap_err().to_string();
        assert!(
            err.contains("`git-commit` is an Agent Skill, not a function definition")
                && err.contains("export `native`"),
            "{format:?}: {err}"
        );
    }
    let native = export(&tool, ExportFormat::Native).unwrap();
    assert_eq!(native.body.as_bytes(), tool.original.as_slice());
    assert!(native.content_type.starts_with("text/markdown"));
}

fn skill(text: &str) -> ToolFiles {
    let mut files = ToolFiles::new();
    files.insert("SKILL.md", text.as_bytes().to_vec());
    files
}

fn problems(text: &str) -> Vec<(String, String)> {
    load(&skill(text))
        .unwrap_err()
        .problems()
        .iter()
        .map(|p| (p.path.clone(), p.message.clone()))
        .collect()
}

#[test]
fn bad_skill_files_are_refused_with_every_problem() {
    let ps = problems("# no frontmatter\n");
    assert!(ps[0].1.contains("`---`"), "{ps:?}");
    let ps = problems("---\nname: x\n");
    assert!(ps[0].1.contains("closing `---`"), "{ps:?}");
    let ps = problems("---\n- a\n- b\n---\nbody\n");
    assert!(ps[0].1.contains("mapping"), "{ps:?}");
    let ps = problems("---\nname: [unclosed\n---\n");
    assert!(ps[0].1.contains("not valid YAML"), "{ps:?}");
    let ps = problems("---\nname: a\nname: b\ndescription: d\n---\n");
    assert!(ps.iter().any(|p| p.0.contains("name")), "{ps:?}");

    // Every problem at once, each with its path.
    let long = "x".repeat(1025);
    let text = format!(
        "---\nname: Bad--Name\ndescription: {long}\ncompatibility: {}\nmetadata: [1]\nallowed-tools: [Bash]\nlicense: 3\n---\nbody\n",
        "c".repeat(501)
    );
    let ps = problems(&text);
    let paths: Vec<&str> = ps.iter().map(|p| p.0.as_str()).collect();
    for path in [
        "name",
        "description",
        "compatibility",
        "metadata",
        "allowed-tools",
        "license",
    ] {
        assert!(paths.contains(&path), "{path} missing in {ps:?}");
    }
    let ps = problems("---\nlicense: MIT\n---\n");
    let paths: Vec<&str> = ps.iter().map(|p| p.0.as_str()).collect();
    assert!(
        paths.contains(&"name") && paths.contains(&"description"),
        "{ps:?}"
    );

    // Over the definition size cap.
    let huge = format!(
        "---\nname: big\ndescription: d\n---\n{}",
        "a".repeat(1024 * 1024)
    );
    let ps = problems(&huge);
    assert!(ps[0].1.contains("at most"), "{ps:?}");
}

#[test]
fn byte_order_mark_and_crlf_are_read() {
    let text = "\u{feff}---\r\nname: tidy-notes\r\ndescription: Tidies notes.\r\nmetadata:\r\n  version: \"2.1.0\"\r\n---\r\n# Tidy\r\n";
    let loaded = load(&skill(text)).unwrap();
    assert_eq!(loaded.tool.registry_name, "tidy-notes");
    assert_eq!(loaded.tool.version.to_string(), "2.1.0");
    assert_eq!(loaded.tool.execution.kind, ExecutionKind::Prompt);

    let mut files = skill(text);
    files.insert("scripts/run", b"#!/bin/sh\n".to_vec());
    assert_eq!(
        load(&files).unwrap().tool.execution.kind,
        ExecutionKind::Script
    );
    let mut files = skill(text);
    files.insert("assets/bundle.zip", b"PK".to_vec());
    assert_eq!(
        load(&files).unwrap().tool.execution.kind,
        ExecutionKind::Script
    );
}
