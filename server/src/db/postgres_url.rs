//! The PostgreSQL URL the pool connects with.
//!
//! libpq's default `sslmode=prefer` sets up TLS whenever the server offers
//! it, also over loopback: about 40 ms per new connection on the build
//! machine (a handshake and a key exchange), paid by the first requests
//! after a start and by every connection the pool opens later. `prefer`
//! checks no certificate, so it protects nothing against an active
//! attacker, and loopback traffic never leaves the machine: for a loopback
//! host without an `sslmode` of its own the pool asks for none. Any
//! `sslmode` in the URL (e.g. `require`, `verify-full`) is kept as given.

/// `url` with `sslmode=disable` added when its host is `localhost` or a
/// loopback address and it names no `sslmode`, `host` or `hostaddr`
/// parameter; otherwise `url` unchanged.
pub fn without_tls_on_loopback(url: &str) -> String {
    let Ok(parsed) = url::Url::parse(url) else {
        return url.to_string();
    };
    let loopback = match parsed.host() {
        // `postgres:` is not a scheme the URL standard knows, so its hosts
        // come as names, addresses included.
        Some(url::Host::Domain(name)) => {
            name.eq_ignore_ascii_case("localhost")
                || name
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    let chooses = parsed
        .query_pairs()
        .any(|(k, _)| matches!(&*k, "sslmode" | "host" | "hostaddr"));
    if !loopback || chooses {
        return url.to_string();
    }
    let separator = if parsed.query().is_some_and(|q| !q.is_empty()) {
        "&"
    } else if url.ends_with('?') {
        ""
    } else {
        "?"
    };
    format!("{url}{separator}sslmode=disable")
}

#[cfg(test)]
mod tests {
    use super::without_tls_on_loopback as url;

    #[test]
    fn loopback_hosts_without_an_sslmode_get_none() {
        for (given, expected) in [
            (
                "postgres://postgres@127.0.0.1:5432/reg",
                "postgres://postgres@127.0.0.1:5432/reg?sslmode=disable",
            ),
            (
                "postgresql://u:p@localhost/reg?application_name=x",
                "postgresql://u:p@localhost/reg?application_name=x&sslmode=disable",
            ),
            (
                "postgres://[::1]:5433/reg",
                "postgres://[::1]:5433/reg?sslmode=disable",
            ),
        ] {
            assert_eq!(url(given), expected);
        }
    }

    #[test]
    fn other_hosts_and_chosen_modes_are_kept() {
        for given in [
            "postgres://u@db.example.com/reg",
            "postgres://u@10.0.0.5/reg",
            "postgres://u@127.0.0.1/reg?sslmode=require",
            "postgres://u@localhost/reg?host=/var/run/postgresql",
            "postgres:///reg",
            "not a url",
        ] {
            assert_eq!(url(given), given);
        }
    }
}
