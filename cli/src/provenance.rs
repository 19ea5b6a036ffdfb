//! Checking a version's provenance (the CI run that published it through
//! trusted publishing) before it is pinned or installed.
//!
//! The version JSON says where a version came from; the registry also signs
//! an attestation of it with its transparency log's key
//! (`GET /api/v1/tools/{name}/{version}/attestation`). A note whose text is
//! `toolreg attestation v1`, a newline, the statement's JSON and a newline.
//! [`open`] checks the note with the pinned log key and that the signed
//! statement is the pin (name, version, sha256, and the definition
//! fingerprint when both have one) with the provenance the version JSON
//! shows. Admission runs it for every pin with provenance it writes or
//! downloads ([`crate::admission::online`], step 4).

use toolreg_api::{AttestationStatement, Provenance, ATTESTATION_HEADER};
use toolreg_core::tlog::Verifier;

use crate::lock::LockedTool;

/// The signed statement of `note`, checked against `pin` and the
/// provenance the version JSON `claimed`; `Err` says what is wrong.
pub fn open(
    note: &str,
    verifier: &Verifier,
    pin: &LockedTool,
    claimed: &Provenance,
) -> Result<AttestationStatement, String> {
    let text = verifier.open(note).map_err(|e| {
        format!(
            "the attestation is not signed by the pinned log key {}: {e}",
            verifier.to_key_string()
        )
    })?;
    let json = text
        .strip_prefix(ATTESTATION_HEADER)
        .and_then(|rest| rest.strip_prefix('\n'))
        .ok_or_else(|| format!("the signed text does not start with `{ATTESTATION_HEADER}`"))?;
    let statement: AttestationStatement = serde_json::from_str(json.trim_end_matches('\n'))
        .map_err(|e| format!("the signed statement is not readable: {e}"))?;
    let version = pin.version.to_string();
    if toolreg_core::name::normalize(&statement.name) != toolreg_core::name::normalize(&pin.name)
        || statement.version != version
    {
        return Err(format!(
            "the registry signed an attestation of {} {} for {} {version}",
            statement.name, statement.version, pin.name
        ));
    }
    if statement.sha256 != pin.sha256 {
        return Err(format!(
            "the attestation is of sha256:{}, but the pinned bundle is sha256:{}",
            statement.sha256, pin.sha256
        ));
    }
    if let (Some(signed), Some(pinned)) = (&statement.definition_sha256, &pin.definition) {
        if signed != pinned {
            return Err(format!(
                "the attestation is of the definition {signed}, but toolreg.lock pins {pinned}"
            ));
        }
    }
    match &statement.provenance {
        Some(signed) if signed == claimed => Ok(statement),
        Some(signed) => Err(format!(
            "the version claims it was published by {} ({}, run {} at {}), but the signed attestation says {} ({}, run {} at {})",
            claimed.repository, claimed.workflow, claimed.run_id, claimed.sha,
            signed.repository, signed.workflow, signed.run_id, signed.sha
        )),
        None => Err(format!(
            "the version claims it was published by {} through trusted publishing, but its signed attestation has no provenance",
            claimed.repository
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolreg_core::tlog::Signer;

    fn fixture() -> (Signer, LockedTool, Provenance, AttestationStatement) {
        let signer = Signer::from_seed("registry.test", [7; 32]).unwrap();
        let pin = LockedTool {
            name: "ci-tool".into(),
            version: "1.1.0".parse().unwrap(),
            sha256: "ab".repeat(32),
            registry: "http://r".into(),
            execution: toolreg_core::ExecutionKind::Http,
            definition: None,
            accepted_findings: Vec::new(),
            provenance: None,
        };
        let provenance = Provenance {
            issuer: "https://token.actions.githubusercontent.com".into(),
            repository: "acme/tools".into(),
            workflow: "release.yml".into(),
            git_ref: "refs/tags/v1.1.0".into(),
            sha: "0123".into(),
            run_id: "4242".into(),
            ..Default::default()
        };
        let statement = AttestationStatement {
            name: "ci-tool".into(),
            version: "1.1.0".into(),
            sha256: pin.sha256.clone(),
            definition_sha256: None,
            provenance: Some(provenance.clone()),
        };
        (signer, pin, provenance, statement)
    }

    fn sign(signer: &Signer, statement: &AttestationStatement) -> String {
        let value = serde_json::to_value(statement).unwrap();
        let text = format!(
            "{ATTESTATION_HEADER}\n{}\n",
            toolreg_core::jcs::to_string(&value)
        );
        signer.sign(&text).unwrap()
    }

    #[test]
    fn a_signed_matching_attestation_opens() {
        let (signer, pin, provenance, statement) = fixture();
        let note = sign(&signer, &statement);
        let opened = open(&note, &signer.verifier(), &pin, &provenance).unwrap();
        assert_eq!(opened, statement);
    }

    #[test]
    fn every_mismatch_is_named() {
        let (signer, pin, provenance, statement) = fixture();
        let v = signer.verifier();
        let other = Signer::from_seed("registry.test", [8; 32]).unwrap();
        let err = open(&sign(&other, &statement), &v, &pin, &provenance).unwrap_err();
        assert!(err.contains("not signed by the pinned log key"), "{err}");

        let mut s = statement.clone();
        s.sha256 = "cd".repeat(32);
        let err = open(&sign(&signer, &s), &v, &pin, &provenance).unwrap_err();
        assert!(err.contains("sha256:cdcd"), "{err}");

        let mut s = statement.clone();
        s.version = "1.0.0".into();
        let err = open(&sign(&signer, &s), &v, &pin, &provenance).unwrap_err();
        assert!(err.contains("ci-tool 1.0.0 for ci-tool 1.1.0"), "{err}");

        let mut claimed = provenance.clone();
        claimed.run_id = "9999".into();
        let err = open(&sign(&signer, &statement), &v, &pin, &claimed).unwrap_err();
        assert!(
            err.contains("run 9999") && err.contains("run 4242"),
            "{err}"
        );

        let mut s = statement.clone();
        s.provenance = None;
        let err = open(&sign(&signer, &s), &v, &pin, &provenance).unwrap_err();
        assert!(err.contains("has no provenance"), "{err}");

        let mut s = statement.clone();
        s.definition_sha256 = Some(format!("sha256:{}", "11".repeat(32)));
        let mut pinned = pin.clone();
        pinned.definition = Some(format!("sha256:{}", "22".repeat(32)));
        let err = open(&sign(&signer, &s), &v, &pinned, &provenance).unwrap_err();
        assert!(err.contains("toolreg.lock pins sha256:2222"), "{err}");
        pinned.definition = s.definition_sha256.clone();
        assert!(open(&sign(&signer, &s), &v, &pinned, &provenance).is_ok());

        // The text must be an attestation, not another signed note.
        let note = signer.sign("toolreg checkpoint\n1\n").unwrap();
        let err = open(&note, &v, &pin, &provenance).unwrap_err();
        assert!(err.contains(ATTESTATION_HEADER), "{err}");
    }
}
