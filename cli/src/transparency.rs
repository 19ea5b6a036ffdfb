//! Checking pins against the registry's transparency log
//! (`docs/transparency.md`), for `add`, `install` and `update`:
//!
//! 1. the log key is the one pinned in toolreg.toml's `[registry] log_key`,
//!    or, on first use, the registry's served key, which is then pinned;
//! 2. the registry's latest checkpoint must be signed by that key;
//! 3. it must be consistent with the newest checkpoint kept in
//!    toolreg.lock: never smaller (a rollback), never a different tree (a fork);
//! 4. every pin's `(name, version, sha256)` must be the record the log holds
//!    for that version, included in the checkpoint's tree.
//!
//! Any failure stops the command with [`Error::Log`] before the key, the
//! checkpoint or a bundle is written.
//!
//! This is the fifth step of admitting a pin ([`crate::admission`]), which
//! also uses the session's verified key to check attestations.

use std::time::Duration;

use toolreg_api::{ConsistencyProof, InclusionProof};
use toolreg_core::tlog::{self, Checkpoint, Hash, Record, Verifier};

use crate::client::Client;
use crate::error::{Error, Result};
use crate::lock::{LockedTool, Lockfile};
use crate::project::Project;

/// How long to wait for a checkpoint that covers a just-published record
/// (the registry signs a new one at least once a second).
const CHECKPOINT_WAIT: Duration = Duration::from_secs(3);

/// What checking the log did, for the user.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The key was not pinned yet and has been trusted on first use.
    pub trusted_key: Option<String>,
    /// The checkpoint now kept in the lock (size), if it changed.
    pub new_checkpoint: Option<u64>,
}

fn fail(client: &Client, message: impl Into<String>) -> Error {
    Error::Log {
        registry: client.registry().to_string(),
        message: message.into(),
    }
}

fn decode(client: &Client, hashes: &[String]) -> Result<Vec<Hash>> {
    hashes
        .iter()
        .map(|h| {
            Hash::from_base64(h, "proof hash")
                .map_err(|e| fail(client, format!("the registry sent a bad proof: {e}")))
        })
        .collect()
}

/// The log state of one command run against one registry: nothing is asked
/// of the registry until the first pin is checked (so an `install` that
/// fetches nothing works offline).
pub struct Session {
    registry: String,
    pinned_key: Option<String>,
    project_path: String,
    kept_note: Option<String>,
    state: Option<State>,
    trusted_key: Option<String>,
    /// Pins whose record was checked in this session: `(name, version, sha256)`.
    verified: Vec<(String, String, String)>,
}

struct State {
    verifier: Verifier,
    previous: Option<Checkpoint>,
    current: (Checkpoint, String),
    started: std::time::Instant,
}

impl Session {
    /// A session for `client`'s registry, with the key pinned in `project`
    /// and the checkpoint kept in `lock` (no network yet).
    pub fn new(client: &Client, project: &Project, lock: &Lockfile) -> Result<Session> {
        Ok(Session {
            registry: client.registry().to_string(),
            pinned_key: project.log_key()?,
            project_path: project.path().display().to_string(),
            kept_note: lock.checkpoint(client.registry()).map(|c| c.note.clone()),
            state: None,
            trusted_key: None,
            verified: Vec::new(),
        })
    }

    /// The log's key, checked against the pinned one (fetching the
    /// checkpoint first, once per session): what attestations are signed with.
    pub fn verifier(&mut self, client: &Client) -> Result<&Verifier> {
        self.ensure(client)?;
        self.state
            .as_ref()
            .map(|s| &s.verifier)
            .ok_or_else(|| fail(client, "no checkpoint"))
    }

    /// Fetch and check the registry's checkpoint (once per session): signed
    /// by the pinned key and consistent with the one kept in the lock.
    pub fn ensure(&mut self, client: &Client) -> Result<()> {
        if self.state.is_some() {
            return Ok(());
        }
        let verifier = match &self.pinned_key {
            Some(key) => Verifier::parse(key).map_err(|e| Error::Project {
                path: self.project_path.clone(),
                message: format!("`registry.log_key`: {e}"),
            })?,
            None => {
                let served =
                    client.get_text("fetching the transparency log key", "/api/v1/log/key")?;
                let verifier = Verifier::parse(served.trim()).map_err(|e| {
                    fail(client, format!("the registry's log key is unusable: {e}"))
                })?;
                self.trusted_key = Some(verifier.to_key_string());
                verifier
            }
        };
        let previous = match &self.kept_note {
            Some(note) => Some(Checkpoint::open(note, &verifier).map_err(|e| {
                fail(
                    client,
                    format!("the checkpoint kept in toolreg.lock does not verify with the pinned log key: {e}"),
                )
            })?),
            None => None,
        };
        let mut current = fetch_checkpoint(client, &verifier)?;
        if previous.as_ref().is_some_and(|p| p.size > current.0.size) {
            // Replicas sign a new checkpoint at least once a second, so one
            // may lag behind another for up to a second: look once more.
            std::thread::sleep(Duration::from_millis(1100));
            current = fetch_checkpoint(client, &verifier)?;
        }
        check_against_previous(client, previous.as_ref(), &current.0)?;
        self.state = Some(State {
            verifier,
            previous,
            current,
            started: std::time::Instant::now(),
        });
        Ok(())
    }

    /// Check that `pin` is the logged record of its version and is in the
    /// registry's signed tree (once per session and bundle).
    pub fn verify(&mut self, client: &Client, pin: &LockedTool) -> Result<()> {
        let key = (
            pin.name.clone(),
            pin.version.to_string(),
            pin.sha256.clone(),
        );
        if self.verified.contains(&key) {
            return Ok(());
        }
        if pin.registry.trim_end_matches('/') != self.registry {
            return Err(fail(
                client,
                format!(
                    "{} {} was pinned from {}, a different registry; run `toolreg update {}` to pin it from this one",
                    pin.name, pin.version, pin.registry, pin.name
                ),
            ));
        }
        self.ensure(client)?;
        let state = self
            .state
            .as_mut()
            .ok_or_else(|| fail(client, "no checkpoint"))?;
        verify_pin(
            client,
            &state.verifier,
            &mut state.current,
            pin,
            state.started,
        )?;
        self.verified.push(key);
        Ok(())
    }

    /// Pin the key in `project` if it was trusted on first use (and save the
    /// project), keep the newest checkpoint in `lock` (the caller saves the
    /// lock), and tell the user (on stderr, unless `json`).
    pub fn finish(self, json: bool, project: &mut Project, lock: &mut Lockfile) -> Result<Outcome> {
        let mut outcome = Outcome::default();
        let Some(state) = self.state else {
            return Ok(outcome);
        };
        if let Some(key) = self.trusted_key {
            project.set_log_key(&key);
            project.save()?;
            if !json {
                crate::output::status(format!(
                    "trusting the registry's transparency log key on first use: {key} (pinned as registry.log_key in {})",
                    project.path().display()
                ));
            }
            outcome.trusted_key = Some(key);
        }
        let (checkpoint, note) = state.current;
        if state
            .previous
            .as_ref()
            .is_none_or(|p| p.size < checkpoint.size)
        {
            lock.set_checkpoint(&self.registry, &note);
            outcome.new_checkpoint = Some(checkpoint.size);
        }
        Ok(outcome)
    }
}

fn fetch_checkpoint(client: &Client, verifier: &Verifier) -> Result<(Checkpoint, String)> {
    let note = client.get_text(
        "fetching the transparency log checkpoint",
        "/api/v1/log/checkpoint",
    )?;
    let checkpoint = Checkpoint::open(&note, verifier).map_err(|e| {
        fail(
            client,
            format!(
                "the registry's checkpoint is not signed by the pinned log key {}: {e}",
                verifier.to_key_string()
            ),
        )
    })?;
    Ok((checkpoint, note))
}

/// The new checkpoint must extend the kept one.
fn check_against_previous(
    client: &Client,
    previous: Option<&Checkpoint>,
    now: &Checkpoint,
) -> Result<()> {
    let Some(old) = previous else { return Ok(()) };
    if now.size < old.size {
        return Err(fail(
            client,
            format!(
                "the log was rolled back: toolreg.lock holds a checkpoint of {} records, but the registry now signs one of {}; \
                 the registry lost or removed published records (restored from an old backup?)",
                old.size, now.size
            ),
        ));
    }
    if now.size == old.size {
        if now.root != old.root {
            return Err(fail(
                client,
                format!(
                    "the log forked: the registry signed two different trees of {} records (toolreg.lock has root {}, the registry now {})",
                    now.size, old.root, now.root
                ),
            ));
        }
        return Ok(());
    }
    let answer: ConsistencyProof = client.get_json(
        "fetching a transparency log consistency proof",
        "/api/v1/log/consistency",
        &[("from", old.size.to_string()), ("to", now.size.to_string())],
    )?;
    let proof = decode(client, &answer.proof)?;
    tlog::verify_consistency(old.size, now.size, &proof, &old.root, &now.root).map_err(|e| {
        fail(
            client,
            format!(
                "the log forked: the tree of {} records in toolreg.lock is not a prefix of the registry's tree of {} ({e})",
                old.size, now.size
            ),
        )
    })
}

/// Check one pin's record and its inclusion in `current`, moving `current`
/// on to a newer (consistent) checkpoint if the record is not in it yet.
fn verify_pin(
    client: &Client,
    verifier: &Verifier,
    current: &mut (Checkpoint, String),
    pin: &LockedTool,
    started: std::time::Instant,
) -> Result<()> {
    let version = pin.version.to_string();
    let path = format!("/api/v1/log/proof/{}/{}", pin.name, version);
    let answer: InclusionProof = loop {
        let result = client.get_json(
            &format!("fetching the log record of {} {version}", pin.name),
            &path,
            &[("size", current.0.size.to_string())],
        );
        match result {
            Ok(answer) => break answer,
            Err(Error::Api(api)) if api.status == 404 => {
                return Err(fail(
                    client,
                    format!(
                        "{} {version} sha256:{} has no record in the log ({}); the registry serves a version it never logged",
                        pin.name, pin.sha256, api.detail
                    ),
                ))
            }
            // The record is newer than the checkpoint: wait for the next one.
            Err(Error::Api(api)) if api.status == 400 && started.elapsed() < CHECKPOINT_WAIT => {
                std::thread::sleep(Duration::from_millis(250));
                let newer = fetch_checkpoint(client, verifier)?;
                check_against_previous(client, Some(&current.0), &newer.0)?;
                *current = newer;
            }
            Err(e) => return Err(e),
        }
    };
    let checkpoint = &current.0;
    if answer.size != checkpoint.size {
        return Err(fail(
            client,
            format!(
                "asked for a proof in the tree of {} records, got one for {}",
                checkpoint.size, answer.size
            ),
        ));
    }
    let record = Record::parse(&answer.record).map_err(|e| {
        fail(
            client,
            format!(
                "the log record of {} {version} is unreadable: {e}",
                pin.name
            ),
        )
    })?;
    let same_name =
        toolreg_core::name::normalize(&record.name) == toolreg_core::name::normalize(&pin.name);
    if !same_name || record.version != version {
        return Err(fail(
            client,
            format!(
                "the registry answered the log record of {} {} for {} {version}",
                record.name, record.version, pin.name
            ),
        ));
    }
    if record.sha256 != pin.sha256 {
        return Err(fail(
            client,
            format!(
                "{} {version}: the registry serves sha256:{}, but the log records sha256:{} for this version; \
                 the bundle was swapped after it was published",
                pin.name, pin.sha256, record.sha256
            ),
        ));
    }
    let proof = decode(client, &answer.proof)?;
    tlog::verify_inclusion(
        answer.index,
        checkpoint.size,
        &record.leaf_hash(),
        &proof,
        &checkpoint.root,
    )
    .map_err(|e| {
        fail(
            client,
            format!(
                "{} {version} sha256:{}: the record is not in the signed tree of {} records ({e})",
                pin.name, pin.sha256, checkpoint.size
            ),
        )
    })?;
    Ok(())
}
