//! Pinned Agent Skills in the folders agents read skills from.
//!
//! A skill is pinned, admitted and installed like any tool (into
//! `.toolreg/tools/NAME/VERSION/`, checked against toolreg.lock). What an
//! agent reads, though, is a folder of skills — Claude Code's
//! `.claude/skills/`, Copilot's `.github/skills/`, Codex's
//! `.agents/skills/`, ... ([`crate::link::clients`] has the table). So
//! `toolreg link AGENT` records the agent's skills folder here, and every
//! `toolreg install` then makes `<folder>/<skill-name>/` a copy of the
//! installed skill, byte for byte: each file read from the verified
//! install, checked against its file manifest again, written into a
//! temporary directory beside the destination and renamed into place.
//!
//! The record, `.toolreg/skills.json`, names each linked agent's folder and
//! every skill toolreg placed there with the digest of each file. It is
//! what makes the rest safe:
//!
//! * a skill folder toolreg did not place is never overwritten (unless it
//!   already is exactly the pinned skill, which is then adopted: a checkout
//!   that commits `.claude/skills/` but not `.toolreg/`);
//! * a skill no longer pinned is removed, and `toolreg unlink AGENT`
//!   removes what toolreg placed — file by file, only files still as
//!   placed; an edited or added file is left and named;
//! * `toolreg verify` ([`check`]) names every file of a placed copy that
//!   was edited, added or removed since, and `install` repairs it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toolreg_core::digest::sha256_hex;
use toolreg_core::Format;

use crate::error::{Error, Result};
use crate::install::{self, drift, Drift, FileManifest, State};
use crate::link::{ClientId, Scope};
use crate::lock::{LockedTool, Lockfile};

/// The record of linked agents' skills folders, relative to the project.
pub const RECORD: &str = ".toolreg/skills.json";

/// `.toolreg/skills.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Links {
    #[serde(default)]
    pub agents: Vec<LinkedAgent>,
}

/// An agent linked with `toolreg link`, and what toolreg placed in its
/// skills folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkedAgent {
    /// The agent's id (`claude-code`, ...).
    pub client: String,
    /// `project` or `user`.
    pub scope: String,
    /// The skills folder, absolute.
    pub folder: PathBuf,
    /// Each skill placed in the folder, by its directory name.
    #[serde(default)]
    pub placed: BTreeMap<String, Placed>,
}

/// A skill toolreg placed in a skills folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placed {
    /// The pin's registry name.
    pub pin: String,
    pub version: String,
    /// The bundle it was copied from.
    pub sha256: String,
    /// sha256 (hex) of every file placed, by `/`-separated path.
    pub files: BTreeMap<String, String>,
}

impl Links {
    /// The record of `root` (empty when there is none).
    pub fn load(root: &Path) -> Result<Links> {
        let path = root.join(RECORD);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                Error::Installed(format!(
                    "{} is unreadable ({e}); remove it and run `toolreg link AGENT` again",
                    path.display()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Links::default()),
            Err(e) => Err(Error::io("could not read", &path, e)),
        }
    }

    fn save(&self, root: &Path) -> Result<()> {
        let path = root.join(RECORD);
        if self.agents.is_empty() && !path.exists() {
            return Ok(());
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io("could not create", dir, e))?;
        }
        let text = serde_json::to_string_pretty(self).unwrap_or_default() + "\n";
        std::fs::write(&path, text).map_err(|e| Error::io("could not write", &path, e))
    }
}

/// Something done in a skills folder, for the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// `placed`, `updated`, `repaired`, `removed`.
    pub action: &'static str,
    pub agent: String,
    pub name: String,
    pub version: String,
    /// The skill's folder (`<skills folder>/<name>`).
    pub path: PathBuf,
    /// For a repair, how the copy had drifted; for a removal, the files
    /// left because they were edited or added since.
    pub detail: Vec<String>,
}

impl Change {
    /// One status line, paths shown relative to `root` where inside it.
    pub fn line(&self, root: &Path) -> String {
        let mut text = format!(
            "{} skill {} {} in {} ({})",
            self.action,
            self.name,
            self.version,
            shown(root, &self.path),
            self.agent
        );
        for d in &self.detail {
            text.push_str(&format!("\n    {d}"));
        }
        text
    }
}

/// `path` relative to `root` when inside it.
pub fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// A pinned skill installed intact in `.toolreg/tools`.
struct PinnedSkill<'a> {
    pin: &'a LockedTool,
    /// The skill's directory name (its frontmatter `name`).
    name: String,
    /// The installed directory.
    source: PathBuf,
    files: BTreeMap<String, String>,
}

/// The pins of `lock` that are skills installed intact (others are
/// `install`'s and `verify`'s to report).
fn pinned_skills<'a>(root: &Path, lock: &'a Lockfile) -> Result<Vec<PinnedSkill<'a>>> {
    let mut out = Vec::new();
    for pin in lock.tools() {
        let State::Intact { tool, .. } = install::check(root, pin)? else {
            continue;
        };
        if tool.format != Format::Skill {
            continue;
        }
        let path = install::manifest_path(root, pin);
        let bytes = std::fs::read(&path).map_err(|e| Error::io("could not read", &path, e))?;
        let manifest: FileManifest = serde_json::from_slice(&bytes)
            .map_err(|e| Error::Installed(format!("{} is unreadable: {e}", path.display())))?;
        out.push(PinnedSkill {
            pin,
            name: tool.call_name.clone(),
            source: install::tool_dir(root, pin),
            files: manifest.files,
        });
    }
    Ok(out)
}

/// Record `client`'s skills folder for `scope` and place the installed
/// skills of `lock` in it.
pub fn link(
    root: &Path,
    client: ClientId,
    scope: Scope,
    folder: PathBuf,
    lock: Option<&Lockfile>,
) -> Result<Vec<Change>> {
    let mut links = Links::load(root)?;
    let at = match links
        .agents
        .iter()
        .position(|a| a.client == client.as_str() && a.scope == scope.as_str())
    {
        Some(i) => {
            links.agents[i].folder = folder;
            i
        }
        None => {
            links.agents.push(LinkedAgent {
                client: client.as_str().to_string(),
                scope: scope.as_str().to_string(),
                folder,
                placed: BTreeMap::new(),
            });
            links.agents.len() - 1
        }
    };
    let empty = Lockfile::default();
    let lock = lock.unwrap_or(&empty);
    let skills = pinned_skills(root, lock)?;
    let result = sync_agent(&mut links.agents[at], &skills, lock);
    links.save(root)?;
    result
}

/// Remove what toolreg placed in `client`'s skills folder for `scope`, and
/// forget the folder.
pub fn unlink(root: &Path, client: ClientId, scope: Scope) -> Result<Vec<Change>> {
    let mut links = Links::load(root)?;
    let Some(at) = links
        .agents
        .iter()
        .position(|a| a.client == client.as_str() && a.scope == scope.as_str())
    else {
        return Ok(Vec::new());
    };
    let mut agent = links.agents.remove(at);
    let mut changes = Vec::new();
    for (name, placed) in std::mem::take(&mut agent.placed) {
        changes.push(remove(&agent, name, placed)?);
    }
    links.save(root)?;
    Ok(changes)
}

/// Bring every linked agent's skills folder in step with the installed
/// skills of `lock`: place missing ones, replace drifted or moved ones,
/// remove the ones no longer pinned.
pub fn sync(root: &Path, lock: &Lockfile) -> Result<Vec<Change>> {
    let mut links = Links::load(root)?;
    if links.agents.is_empty() {
        return Ok(Vec::new());
    }
    let skills = pinned_skills(root, lock)?;
    let mut changes = Vec::new();
    let mut failed = None;
    for agent in &mut links.agents {
        match sync_agent(agent, &skills, lock) {
            Ok(c) => changes.extend(c),
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    // What was placed before a failure is recorded all the same.
    links.save(root)?;
    match failed {
        Some(e) => Err(e),
        None => Ok(changes),
    }
}

fn sync_agent(
    agent: &mut LinkedAgent,
    skills: &[PinnedSkill<'_>],
    lock: &Lockfile,
) -> Result<Vec<Change>> {
    let mut changes = Vec::new();
    for skill in skills {
        let target = agent.folder.join(&skill.name);
        let recorded = agent.placed.get(&skill.name).cloned();
        let meta = std::fs::symlink_metadata(&target).ok();
        let drift = match &meta {
            None => None,
            Some(m) if m.is_dir() => Some(drift::compare(&target, &skill.files)?),
            Some(_) => Some(vec![Drift::Edited(String::new())]),
        };
        let as_pinned = Placed {
            pin: skill.pin.name.clone(),
            version: skill.pin.version.to_string(),
            sha256: skill.pin.sha256.clone(),
            files: skill.files.clone(),
        };
        if drift.as_ref().is_some_and(Vec::is_empty) {
            // Already exactly the pinned skill (placed before, or adopted).
            agent.placed.insert(skill.name.clone(), as_pinned);
            continue;
        }
        if drift.is_some() && recorded.is_none() {
            return Err(Error::Installed(format!(
                "{} exists and was not placed by toolreg, so the pinned skill {} {} was not put there; \
                 move it away (or remove it) and run `toolreg install` again",
                target.display(),
                skill.pin.name,
                skill.pin.version
            )));
        }
        place(&agent.folder, &skill.source, &target, &skill.files)?;
        let (action, detail) = match (&recorded, drift) {
            (None, _) | (_, None) => ("placed", Vec::new()),
            (Some(r), _) if r.sha256 != skill.pin.sha256 => {
                ("updated", vec![format!("from version {}", r.version)])
            }
            (Some(_), Some(d)) => ("repaired", d.iter().map(ToString::to_string).collect()),
        };
        changes.push(Change {
            action,
            agent: agent.client.clone(),
            name: skill.name.clone(),
            version: skill.pin.version.to_string(),
            path: target,
            detail,
        });
        agent.placed.insert(skill.name.clone(), as_pinned);
    }
    // Skills placed for a pin the lock no longer has.
    let gone: Vec<String> = agent
        .placed
        .iter()
        .filter(|(_, p)| lock.get(&p.pin).is_none())
        .map(|(name, _)| name.clone())
        .collect();
    for name in gone {
        if let Some(placed) = agent.placed.remove(&name) {
            changes.push(remove(agent, name, placed)?);
        }
    }
    Ok(changes)
}

/// Remove the skill `name` that toolreg `placed` in `agent`'s folder (the
/// files it placed that are unchanged), as a change to report.
fn remove(agent: &LinkedAgent, name: String, placed: Placed) -> Result<Change> {
    let path = agent.folder.join(&name);
    let left = remove_placed(&path, &placed.files)?;
    Ok(Change {
        action: "removed",
        agent: agent.client.clone(),
        name,
        version: placed.version,
        path,
        detail: left,
    })
}

/// Copy the installed skill at `source` to `target` (replacing whatever is
/// there), each file checked against `files` as it is read.
fn place(
    folder: &Path,
    source: &Path,
    target: &Path,
    files: &BTreeMap<String, String>,
) -> Result<()> {
    std::fs::create_dir_all(folder).map_err(|e| Error::io("could not create", folder, e))?;
    let staging = tempfile::Builder::new()
        .prefix(".toolreg-skill-")
        .tempdir_in(folder)
        .map_err(|e| Error::io("could not create a temporary directory in", folder, e))?;
    for (rel, digest) in files {
        let from = source.join(rel);
        let bytes = std::fs::read(&from).map_err(|e| Error::io("could not read", &from, e))?;
        if sha256_hex(&bytes) != *digest {
            return Err(Error::Installed(format!(
                "{} changed while it was being copied; run `toolreg install` again",
                from.display()
            )));
        }
        let to = staging.path().join(rel);
        if let Some(dir) = to.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io("could not create", dir, e))?;
        }
        std::fs::write(&to, &bytes).map_err(|e| Error::io("could not write", &to, e))?;
    }
    match std::fs::symlink_metadata(target) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(target),
        Ok(_) => std::fs::remove_file(target),
        Err(_) => Ok(()),
    }
    .map_err(|e| Error::io("could not replace", target, e))?;
    let staged = staging.keep();
    if let Err(e) = std::fs::rename(&staged, target) {
        let _ = std::fs::remove_dir_all(&staged);
        return Err(Error::io("could not move the skill to", target, e));
    }
    Ok(())
}

/// Remove the files of a placed skill that are still as placed, then the
/// directories left empty; the paths of files left behind (edited or added
/// since) are returned.
fn remove_placed(dir: &Path, files: &BTreeMap<String, String>) -> Result<Vec<String>> {
    if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        return Ok(Vec::new());
    }
    for (rel, digest) in files {
        let path = dir.join(rel);
        let same = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file())
            && std::fs::read(&path).is_ok_and(|b| sha256_hex(&b) == *digest);
        if same {
            std::fs::remove_file(&path).map_err(|e| Error::io("could not remove", &path, e))?;
        }
    }
    let left: Vec<String> = drift::compare(dir, &BTreeMap::new())?
        .into_iter()
        .filter_map(|d| {
            d.path().map(|p| {
                format!(
                    "kept {} (changed since it was placed)",
                    dir.join(p).display()
                )
            })
        })
        .collect();
    remove_empty_dirs(dir);
    Ok(left)
}

/// Remove `dir` and the directories under it that are empty.
fn remove_empty_dirs(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_dirs(&entry.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// How a placed copy compares with the installed skill.
#[derive(Debug, Clone)]
pub enum CopyState {
    Intact,
    /// Not in the folder (removed by hand, or not placed yet).
    Missing,
    Drifted(Vec<Drift>),
}

/// One installed skill in one linked agent's folder.
#[derive(Debug, Clone)]
pub struct CopyCheck {
    pub agent: String,
    pub pin: String,
    pub version: String,
    pub path: PathBuf,
    pub state: CopyState,
}

/// Every installed skill of `lock` in every linked agent's folder,
/// compared file by file with what the lock pins (`toolreg verify`).
pub fn check(root: &Path, lock: &Lockfile) -> Result<Vec<CopyCheck>> {
    let links = Links::load(root)?;
    if links.agents.is_empty() {
        return Ok(Vec::new());
    }
    let skills = pinned_skills(root, lock)?;
    let mut out = Vec::new();
    for agent in &links.agents {
        for skill in &skills {
            let path = agent.folder.join(&skill.name);
            let state = match std::fs::symlink_metadata(&path) {
                Err(_) => CopyState::Missing,
                Ok(m) if !m.is_dir() => CopyState::Drifted(vec![Drift::Edited(String::new())]),
                Ok(_) => match drift::compare(&path, &skill.files)? {
                    d if d.is_empty() => CopyState::Intact,
                    d => CopyState::Drifted(d),
                },
            };
            out.push(CopyCheck {
                agent: agent.client.clone(),
                pin: skill.pin.name.clone(),
                version: skill.pin.version.to_string(),
                path,
                state,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removing_a_placed_skill_keeps_edited_and_added_files() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("tidy-notes");
        std::fs::create_dir_all(skill.join("references")).unwrap();
        std::fs::write(skill.join("SKILL.md"), "placed").unwrap();
        std::fs::write(skill.join("references/a.md"), "placed a").unwrap();
        let files = BTreeMap::from([
            ("SKILL.md".to_string(), sha256_hex(b"placed")),
            ("references/a.md".to_string(), sha256_hex(b"placed a")),
        ]);
        assert!(remove_placed(&skill, &files).unwrap().is_empty());
        assert!(!skill.exists());

        std::fs::create_dir_all(skill.join("references")).unwrap();
        std::fs::write(skill.join("SKILL.md"), "edited").unwrap();
        std::fs::write(skill.join("references/a.md"), "placed a").unwrap();
        std::fs::write(skill.join("mine.md"), "the user's").unwrap();
        let left = remove_placed(&skill, &files).unwrap();
        assert_eq!(left.len(), 2, "{left:?}");
        assert!(left.iter().any(|l| l.contains("SKILL.md")), "{left:?}");
        assert!(left.iter().any(|l| l.contains("mine.md")), "{left:?}");
        assert!(!skill.join("references").exists());
        assert_eq!(std::fs::read(skill.join("mine.md")).unwrap(), b"the user's");
    }
}
