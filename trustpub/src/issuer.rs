//! Issuers: the hosted CI platforms' issuer URLs, and the check of an
//! issuer URL from the registry's configuration.

/// GitHub Actions' issuer.
pub const GITHUB_ISSUER: &str = "https://token.actions.githubusercontent.com";
/// GitLab.com's issuer (self-managed GitLab issues as its own URL).
pub const GITLAB_ISSUER: &str = "https://gitlab.com";

/// Check an issuer URL from the configuration: `https://`, or `http://`
/// for a loopback host only (a local issuer in tests). Returns it without
/// a trailing `/`.
pub fn parse_issuer(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text.trim()).map_err(|e| format!("`{text}` is not a URL: {e}"))?;
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost",
        None => false,
    };
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        "http" => {
            return Err(format!(
                "`{text}`: an issuer must use https (http only for a loopback host)"
            ))
        }
        other => return Err(format!("`{text}`: unsupported scheme `{other}`")),
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("`{text}`: an issuer has no query or fragment"));
    }
    Ok(text.trim().trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::parse_issuer;

    #[test]
    fn issuers_need_https_except_on_loopback() {
        assert!(parse_issuer("https://token.actions.githubusercontent.com/").is_ok());
        assert!(parse_issuer("http://127.0.0.1:9999").is_ok());
        assert!(parse_issuer("http://localhost:1").is_ok());
        assert!(parse_issuer("http://issuer.example").is_err());
        assert!(parse_issuer("ftp://x").is_err());
        assert!(parse_issuer("nonsense").is_err());
    }
}
