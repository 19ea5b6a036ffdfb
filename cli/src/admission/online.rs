//! The admission steps that ask the registry, for `add`, `update` and
//! `install` ([`Gate`]), and the refresh of the record of what it says
//! about installed pins, for `verify` and `export` ([`refresh`]).
//!
//! What the registry says about a version comes from one answer, `GET
//! /api/v1/tools/{name}/{version}` ([`View`]), read once per run: whether it
//! is withheld (step 2), its lint findings (3), its provenance (4) and the
//! definition fingerprint it recorded at publish (7). Attestations (4) and
//! log inclusion (5) are checked against the transparency log's key
//! ([`crate::transparency::Session`]).

use std::path::Path;

use semver::VersionReq;
use toolreg_api::{EncodableDeprecation, Provenance, Resolved};

use super::findings::{self, Acceptance};
use super::policy::Policy;
use super::provenance;
use super::record::{Record, Withheld};
use crate::client::Client;
use crate::error::{Error, Result};
use crate::lock::{Builder, LockedTool, Lockfile};
use crate::project::Project;
use crate::transparency::{Outcome, Session};

/// What the registry says about one version now.
#[derive(Debug, Clone, Default)]
pub struct View {
    pub withheld: Option<Withheld>,
    pub findings: Vec<toolreg_core::lint::Finding>,
    pub provenance: Option<Provenance>,
    pub definition_sha256: Option<String>,
    /// Its owners' deprecation: a warning, or a refusal under `[policy]
    /// deny_deprecated`.
    pub deprecated: Option<EncodableDeprecation>,
}

/// The version JSON of `name` `version` as a [`View`]; `None` when the
/// registry has no such document (it claims nothing about it then). Its
/// findings are the flags and blocks only: a note is nothing a project
/// accepts.
pub fn view(client: &Client, name: &str, version: &str) -> Result<Option<View>> {
    match client.version(name, version) {
        Ok(v) => Ok(Some(View {
            withheld: Withheld::of(&v),
            findings: v.findings.into_iter().filter(|f| !f.is_note()).collect(),
            provenance: v.provenance,
            definition_sha256: v.definition_sha256,
            deprecated: v.deprecated,
        })),
        Err(Error::Api(api)) if api.status == 404 => Ok(None),
        Err(e) => Err(e),
    }
}

/// The warning printed when the registry can't be asked and the record is
/// used instead.
fn offline_warning(err: &Error) -> String {
    format!(
        "warning: could not ask the registry about the pins ({err}); checking them against what it said last ({})",
        super::record::FILE
    )
}

/// Ask each pin's registry what it says about the pinned version, and
/// record it. On the first failure (the registry unreachable, or an answer
/// it can't give) it stops and returns the warning to print: the record is
/// then used as it was.
pub fn refresh(record: &mut Record, lock: &Lockfile) -> Option<String> {
    let mut clients: Vec<Client> = Vec::new();
    for pin in lock.tools() {
        let base = pin.registry.trim_end_matches('/');
        let client = match clients.iter().find(|c| c.registry() == base) {
            Some(c) => c.clone(),
            None => match Client::quick(base) {
                Ok(c) => {
                    clients.push(c.clone());
                    c
                }
                Err(e) => return Some(offline_warning(&e)),
            },
        };
        match view(&client, &pin.name, &pin.version.to_string()) {
            Ok(Some(v)) => record.learn(pin, v.withheld, findings::rules_of(&v.findings)),
            Ok(None) => {}
            Err(e) => return Some(offline_warning(&e)),
        }
    }
    None
}

/// What checking an existing pin learnt, for the lock (never with `--locked`).
#[derive(Debug, Clone, Default)]
pub struct PinNews {
    /// Findings rules `[policy] accept_findings` accepts and the lock does not record yet.
    pub accept: Option<Vec<toolreg_core::lint::Rule>>,
    /// The verified builder, for a pin whose lock entry records none yet.
    pub provenance: Option<Builder>,
    /// The definition fingerprint the registry recorded at publish.
    pub definition_sha256: Option<String>,
    /// False when the registry could not be asked (the pin was held to the
    /// record): nothing is to be recorded from it.
    pub asked: bool,
}

/// One run's admission against one registry: the policy, how this run
/// accepts findings, the log session, what the registry said about each
/// version, and the record of it.
pub struct Gate<'a> {
    client: &'a Client,
    /// Clients for pins of other registries (their version JSON).
    others: Vec<Client>,
    policy: Policy,
    acceptance: Acceptance,
    log: Session,
    views: Vec<((String, String), Option<View>)>,
    attested: Vec<(String, String)>,
    said: Vec<String>,
    /// Warnings about the versions pinned (deprecated ones), printed on
    /// stderr when the command succeeds.
    warnings: Vec<String>,
    record: Record,
    /// Set once the registry could not be reached (the warning to print
    /// when the command succeeds): installed pins are then checked against
    /// the record.
    offline: Option<String>,
}

impl<'a> Gate<'a> {
    /// A gate for `client`'s registry, the project's policy (plus
    /// `--accept-findings` when `accept_all`), the log key pinned in the
    /// project and the checkpoint kept in `lock`, and the record at `root`.
    pub fn new(
        client: &'a Client,
        project: &Project,
        lock: &Lockfile,
        root: &Path,
        accept_all: bool,
    ) -> Result<Gate<'a>> {
        Ok(Gate {
            client,
            others: Vec::new(),
            policy: project.policy().clone(),
            acceptance: Acceptance::of(project.policy(), accept_all),
            log: Session::new(client, project, lock)?,
            views: Vec::new(),
            attested: Vec::new(),
            said: Vec::new(),
            warnings: Vec::new(),
            record: Record::load(root)?,
            offline: None,
        })
    }

    /// The project's policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// What `registry` says about `name` `version` (asked once per run).
    fn view(&mut self, registry: &str, name: &str, version: &str) -> Result<Option<View>> {
        let key = (name.to_string(), version.to_string());
        if let Some((_, v)) = self.views.iter().find(|(k, _)| *k == key) {
            return Ok(v.clone());
        }
        let registry = registry.trim_end_matches('/');
        let v = if registry == self.client.registry() {
            view(self.client, name, version)?
        } else {
            let client = match self.others.iter().find(|c| c.registry() == registry) {
                Some(c) => c.clone(),
                None => {
                    let c = Client::new(registry, None)?;
                    self.others.push(c.clone());
                    c
                }
            };
            view(&client, name, version)?
        };
        self.views.push((key, v.clone()));
        Ok(v)
    }

    /// Resolve `req` for `name` and admit the answer ([`Gate::admit_resolved`]).
    pub fn resolve(
        &mut self,
        name: &str,
        req: &VersionReq,
        previous: Option<&LockedTool>,
    ) -> Result<LockedTool> {
        let (resolved, version) = self.client.resolve(name, req)?;
        self.admit_resolved(name, resolved, version, previous)
    }

    /// Steps 1–5 for a version about to be pinned as `name` (`add`,
    /// `update`, and `install` when it syncs the lock): its kind, not
    /// withheld, its findings accepted (keeping rules `previous` accepted
    /// for the same bundle), its attestation and builder, and its record in
    /// the log. The digest, fingerprint and files are checked when it is
    /// installed.
    pub fn admit_resolved(
        &mut self,
        name: &str,
        resolved: Resolved,
        version: semver::Version,
        previous: Option<&LockedTool>,
    ) -> Result<LockedTool> {
        self.policy
            .check_kind(name, &resolved.version, resolved.execution)?;
        let registry = self.client.registry().to_string();
        let view = self
            .view(&registry, &resolved.name, &resolved.version)?
            .unwrap_or_default();
        let mut pin = LockedTool {
            name: name.to_string(),
            version,
            sha256: resolved.sha256,
            registry: self.client.registry().to_string(),
            execution: resolved.execution,
            definition: None,
            accepted_findings: Vec::new(),
            provenance: None,
        };
        if let Some(w) = &view.withheld {
            return Err(w.refusal(&pin, None));
        }
        if let Some(d) = &view.deprecated {
            self.deprecated(&pin, d)?;
        }
        let already = match previous {
            Some(p) if p.version == pin.version && p.sha256 == pin.sha256 => {
                p.accepted_findings.as_slice()
            }
            _ => &[],
        };
        pin.accepted_findings = findings::accept(
            name,
            &resolved.version,
            &view.findings,
            &self.acceptance,
            already,
        )?;
        if let Some(claimed) = &view.provenance {
            self.attest(&pin, claimed)?;
        }
        let builder = view.provenance.as_ref().map(Builder::of);
        provenance::required(&pin, builder.as_ref(), &self.policy, false)?;
        pin.provenance = builder;
        self.log.verify(self.client, &pin)?;
        Ok(pin)
    }

    /// Steps 1–4 for a pin of the lock, against what the registry says now
    /// (`install`): its kind, not withheld, its findings accepted by the
    /// lock (or, unless `locked`, by the policy: returned to record), the
    /// builder the lock records (or, unless `locked`, the verified one to
    /// record), and `require_provenance`. What it says is recorded.
    ///
    /// With `installed` (the pin needs no download) an unreachable registry
    /// is not an error: the pin is held to the record instead, once a
    /// warning is printed.
    pub fn check_pin(
        &mut self,
        pin: &LockedTool,
        locked: bool,
        installed: bool,
    ) -> Result<PinNews> {
        let version = pin.version.to_string();
        self.policy.check_kind(&pin.name, &version, pin.execution)?;
        if self.offline.is_some() && installed {
            super::offline::registry_steps(pin, &self.policy, &self.record)?;
            return Ok(PinNews::default());
        }
        let view = match self.view(&pin.registry, &pin.name, &version) {
            Ok(v) => v,
            Err(e @ Error::Network { .. }) if installed => {
                self.offline = Some(offline_warning(&e));
                super::offline::registry_steps(pin, &self.policy, &self.record)?;
                return Ok(PinNews::default());
            }
            Err(e) => return Err(e),
        };
        let Some(view) = view else {
            return Ok(PinNews {
                asked: true,
                ..PinNews::default()
            });
        };
        self.record.learn(
            pin,
            view.withheld.clone(),
            findings::rules_of(&view.findings),
        );
        if let Some(w) = &view.withheld {
            return Err(w.refusal(pin, None));
        }
        if let (Some(d), Some(location)) = (&view.deprecated, &self.policy.deny_deprecated) {
            return Err(deprecated_refusal(pin, d, location));
        }
        let accept = findings::check_pin(pin, &view.findings, &self.acceptance, locked)?;
        provenance::matches_lock(pin, view.provenance.as_ref())?;
        let record_builder = pin.provenance.is_none() && view.provenance.is_some() && !locked;
        if let Some(claimed) = &view.provenance {
            if record_builder || self.policy.provenance_for(&pin.name).is_some() {
                self.attest(pin, claimed)?;
            }
        }
        let builder = view.provenance.as_ref().map(Builder::of);
        provenance::required(pin, builder.as_ref(), &self.policy, false)?;
        Ok(PinNews {
            accept,
            provenance: builder.filter(|_| record_builder),
            definition_sha256: view.definition_sha256,
            asked: true,
        })
    }

    /// For a downloaded bundle, before it is unpacked: its attestation (a
    /// version with provenance) and its record in the log. Only when the
    /// bytes hash to the pinned digest: a mismatch is the install's error.
    pub fn check_download(&mut self, pin: &LockedTool, bytes: &[u8]) -> Result<()> {
        if toolreg_core::digest::sha256_hex(bytes) != pin.sha256 {
            return Ok(());
        }
        let claimed = self
            .view(&pin.registry, &pin.name, &pin.version.to_string())?
            .and_then(|v| v.provenance);
        if let Some(claimed) = &claimed {
            self.attest(pin, claimed)?;
        }
        self.log.verify(self.client, pin)
    }

    /// Step 5 for pins kept as they were (`update`), and the checkpoint's
    /// consistency when there are none.
    pub fn log_all(&mut self, pins: &[LockedTool]) -> Result<()> {
        self.log.ensure(self.client)?;
        for pin in pins {
            self.log.verify(self.client, pin)?;
        }
        Ok(())
    }

    /// Who built `pin`'s version: what the lock records, else what the
    /// registry says (a pin from a lock written before builders were
    /// recorded).
    pub fn builder_of(&mut self, pin: &LockedTool) -> Result<Option<Builder>> {
        if pin.provenance.is_some() {
            return Ok(pin.provenance.clone());
        }
        Ok(self
            .view(&pin.registry, &pin.name, &pin.version.to_string())?
            .and_then(|v| v.provenance)
            .map(|p| Builder::of(&p)))
    }

    /// Step 2's advice: a version its owners deprecated is refused under
    /// `[policy] deny_deprecated`, and otherwise pinned with a warning that
    /// names the successor.
    fn deprecated(&mut self, pin: &LockedTool, d: &EncodableDeprecation) -> Result<()> {
        if let Some(location) = &self.policy.deny_deprecated {
            return Err(deprecated_refusal(pin, d, location));
        }
        let clean = crate::output::clean;
        let mut warning = format!(
            "warning: {} {} is deprecated by its owners: {}",
            pin.name,
            pin.version,
            clean(&d.message)
        );
        if let Some(s) = &d.successor {
            warning.push_str(&format!(
                " (its successor is {}: `toolreg add {}`)",
                clean(s),
                clean(s)
            ));
        }
        self.warnings.push(warning);
        Ok(())
    }

    /// Check the signed attestation of `pin` against `claimed` (once per
    /// version and run).
    fn attest(&mut self, pin: &LockedTool, claimed: &Provenance) -> Result<()> {
        let version = pin.version.to_string();
        let key = (pin.name.clone(), version.clone());
        if self.attested.contains(&key) {
            return Ok(());
        }
        let attestation = self.client.attestation(&pin.name, &version)?;
        let verifier = self.log.verifier(self.client)?;
        crate::provenance::open(&attestation.note, verifier, pin, claimed).map_err(|message| {
            Error::Attestation {
                name: pin.name.clone(),
                version: version.clone(),
                message,
            }
        })?;
        self.said.push(format!(
            "provenance of {} {version}: built by {} ({}, {} at {}, run {}); attestation verified",
            pin.name,
            claimed.repository,
            claimed.workflow,
            claimed.git_ref,
            claimed.sha,
            claimed.run_id
        ));
        self.attested.push(key);
        Ok(())
    }

    /// Write the record of what the registry said (also when the command
    /// fails: a refusal is worth remembering offline).
    pub fn save_record(&mut self, root: &Path, lock: &Lockfile) -> Result<()> {
        self.record.save(root, lock).map(|_| ())
    }

    /// Tell the user what was verified (on stderr, unless `json`), pin the
    /// log key if it was trusted on first use, and keep the newest
    /// checkpoint in `lock` (the caller saves it).
    pub fn finish(self, json: bool, project: &mut Project, lock: &mut Lockfile) -> Result<Outcome> {
        if !json {
            for said in &self.said {
                crate::output::status(said);
            }
        }
        if let Some(warning) = &self.offline {
            crate::output::status(warning);
        }
        for warning in &self.warnings {
            crate::output::status(warning);
        }
        self.log.finish(json, project, lock)
    }
}

/// The refusal of a deprecated version under `[policy] deny_deprecated`
/// (written at `location`).
fn deprecated_refusal(pin: &LockedTool, d: &EncodableDeprecation, location: &str) -> Error {
    let clean = crate::output::clean;
    Error::Deprecated {
        name: pin.name.clone(),
        version: pin.version.to_string(),
        message: clean(&d.message),
        successor: d.successor.as_deref().map(clean),
        location: location.to_string(),
    }
}
