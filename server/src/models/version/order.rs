//! A version's identity and order: its uniqueness key (build metadata
//! ignored) and the stored string whose byte order is SemVer precedence
//! (`versions.version_order`), filled in at start-up for versions published
//! before the column existed.

use diesel::prelude::*;

use crate::db::DbConnection;
use crate::error::AppResult;
use crate::schema::versions;

/// The uniqueness key of a version: without build metadata, so `1.0.0+a`
/// and `1.0.0+b` are the same version (as on crates.io).
pub fn version_key(v: &semver::Version) -> String {
    let mut v = v.clone();
    v.build = semver::BuildMetadata::EMPTY;
    v.to_string()
}

/// The [`version_key`] a lookup of `version` as written in a request
/// matches; `None` when it is no SemVer version (so no version matches).
pub fn lookup_key(version: &str) -> Option<String> {
    semver::Version::parse(version)
        .ok()
        .map(|v| version_key(&v))
}

/// A string whose byte order is the SemVer precedence of `v` (build
/// metadata ignored, like [`version_key`]), stored as `versions.version_order`
/// so the newest versions of a tool come from an index in order.
///
/// Major, minor and patch are zero-padded to the 20 digits of a `u64`. A
/// release ends in `~`, which sorts after the `-` that starts a
/// pre-release, so `1.0.0` > `1.0.0-rc.1`. Each pre-release identifier is
/// `0` + its length (4 digits) + its digits when numeric, so numbers compare
/// by value and below words, or `1` + the word; they are joined by `!`,
/// which sorts below every character an identifier may hold, so a shorter
/// list of otherwise equal identifiers comes first, as SemVer orders them.
pub fn precedence_key(v: &semver::Version) -> String {
    let mut key = format!("{:020}.{:020}.{:020}", v.major, v.minor, v.patch);
    if v.pre.is_empty() {
        key.push('~');
        return key;
    }
    key.push('-');
    for (i, id) in v.pre.as_str().split('.').enumerate() {
        if i > 0 {
            key.push('!');
        }
        if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
            key.push_str(&format!("0{:04}{id}", id.len()));
        } else {
            key.push('1');
            key.push_str(id);
        }
    }
    key
}

/// The stored order key of a version string: [`precedence_key`], or for a
/// string that is not SemVer (publish refuses those) `!` and the string, which
/// sorts below every real version and is never empty (empty marks a row to
/// fill in).
pub fn order_key(version: &str) -> String {
    match semver::Version::parse(version) {
        Ok(v) => precedence_key(&v),
        Err(_) => format!("!{version}"),
    }
}

/// The condition of the versions still without an order key, as SQL text
/// with the empty string written out: the partial index
/// `versions_without_order` (`WHERE version_order = ''`) holds only those
/// versions, but a query can use a partial index only when its own
/// condition names the same value; with a bound parameter
/// (`version_order = ?`, as `.eq("")` makes) SQLite planned a scan of every
/// version row at each start (16,716 pages at 100,000 versions).
pub const WITHOUT_ORDER: &str = "versions.version_order = ''";

/// Fill in `version_order` for up to `limit` versions published before the
/// column existed, and say how many were filled (0 when none are left).
/// Call inside a write transaction until it returns 0.
pub fn fill_order(conn: &mut DbConnection, limit: i64) -> AppResult<usize> {
    let rows: Vec<(i64, String)> = versions::table
        .filter(diesel::dsl::sql::<diesel::sql_types::Bool>(WITHOUT_ORDER))
        .order(versions::id.asc())
        .limit(limit)
        .select((versions::id, versions::version))
        .load(conn)?;
    for (id, version) in &rows {
        diesel::update(versions::table.find(id))
            .set(versions::version_order.eq(order_key(version)))
            .execute(conn)?;
    }
    Ok(rows.len())
}

#[cfg(test)]
mod tests {
    use super::{order_key, precedence_key};

    /// Every pair of `versions` orders the same by key as by SemVer.
    fn assert_same_order(versions: &[&str]) {
        for a in versions {
            for b in versions {
                let (va, vb) = (
                    semver::Version::parse(a).expect("semver"),
                    semver::Version::parse(b).expect("semver"),
                );
                let by_semver = va.cmp_precedence(&vb);
                let by_key = precedence_key(&va).cmp(&precedence_key(&vb));
                assert_eq!(by_key, by_semver, "{a} vs {b}");
            }
        }
    }

    #[test]
    fn keys_sort_like_the_semver_spec_example() {
        // The precedence example of the SemVer 2.0.0 specification, in order.
        let spec = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
        ];
        let keys: Vec<String> = spec.iter().map(|v| order_key(v)).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        assert_same_order(&spec);
    }

    #[test]
    fn keys_sort_like_semver_across_edge_cases() {
        assert_same_order(&[
            "0.0.0",
            "0.0.1",
            "0.1.0",
            "0.9.0",
            "0.10.0",
            "1.0.0-0",
            "1.0.0-1",
            "1.0.0-9",
            "1.0.0-10",
            "1.0.0-a",
            "1.0.0-a-b",
            "1.0.0-a.0",
            "1.0.0-a.b",
            "1.0.0-A",
            "1.0.0-Z.9",
            "1.0.0-z",
            "1.0.0-zz",
            "1.0.0-99999999999999999999",
            "1.0.0-100000000000000000000",
            "1.0.0+build.1",
            "1.0.1-rc.1",
            "2.0.0",
            "10.0.0",
            "18446744073709551615.0.0",
        ]);
    }

    #[test]
    fn build_metadata_is_ignored_and_bad_strings_sort_first() {
        assert_eq!(order_key("1.0.0+a"), order_key("1.0.0+b"));
        assert!(order_key("not-semver") < order_key("0.0.0-0"));
        assert!(!order_key("").is_empty());
    }
}
