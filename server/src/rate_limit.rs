//! Rate limits on publishing, token creation and reports (`429`, `docs/api.md`), per
//! token, per user (so minting tokens gives no fresh allowance) and per client
//! IP (an IPv6 client counts per /64, the block one subscriber gets). Counts live in the database (`rate_limits`, one
//! fixed-window counter per action and subject, bumped with one upsert), so
//! every replica on the same database shares them.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};
use std::str::FromStr;
use std::time::Duration;

use actix_web::HttpRequest;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};

use crate::db::{Db, DbConnection};
use crate::error::{AppError, AppResult};
use crate::schema::tokens;

/// At most `max` requests per `window`; `max == 0` means no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub max: u32,
    pub window: Duration,
}

impl RateLimit {
    /// No limit.
    pub const OFF: RateLimit = RateLimit {
        max: 0,
        window: Duration::from_secs(60),
    };

    pub fn is_off(&self) -> bool {
        self.max == 0
    }

    /// `60/min`, `10/s`, `1000/hour`, `5/10s`; `0` (or `0/min`) turns the limit off.
    pub fn parse(spec: &str) -> Result<RateLimit, String> {
        let spec = spec.trim();
        let usage = || {
            format!("`{spec}` is not a rate limit: write it as COUNT/PERIOD, e.g. `60/min`, `10/s`, `1000/hour`, or `0` for none")
        };
        let (count, period) = match spec.split_once('/') {
            Some((c, p)) => (c.trim(), p.trim()),
            None if spec == "0" => return Ok(RateLimit::OFF),
            None => return Err(usage()),
        };
        let max: u32 = count.parse().map_err(|_| usage())?;
        let digits = period
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(period.len());
        let (n, unit) = period.split_at(digits);
        let n: u64 = if n.is_empty() {
            1
        } else {
            n.parse().map_err(|_| usage())?
        };
        let unit_secs = match unit {
            "s" | "sec" | "second" | "seconds" => 1,
            "m" | "min" | "minute" | "minutes" => 60,
            "h" | "hour" | "hours" => 3600,
            "d" | "day" | "days" => 86_400,
            _ => return Err(usage()),
        };
        if n == 0 {
            return Err(usage());
        }
        Ok(RateLimit {
            max,
            window: Duration::from_secs(n * unit_secs),
        })
    }
}

impl FromStr for RateLimit {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RateLimit::parse(s)
    }
}

impl fmt::Display for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_off() {
            return f.write_str("0");
        }
        match self.window.as_secs() {
            60 => write!(f, "{}/min", self.max),
            3600 => write!(f, "{}/hour", self.max),
            86_400 => write!(f, "{}/day", self.max),
            s => write!(f, "{}/{s}s", self.max),
        }
    }
}

/// What is being limited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Publish,
    TokenCreate,
    /// `POST /api/v1/oidc/exchange`, counted per IP under the token-creation limit.
    OidcExchange,
    Report,
}

impl Action {
    fn as_str(self) -> &'static str {
        match self {
            Action::Publish => "publish",
            Action::TokenCreate => "token_create",
            Action::OidcExchange => "oidc_exchange",
            Action::Report => "report",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Action::Publish => "publishes",
            Action::TokenCreate => "token creations",
            Action::OidcExchange => "ID token exchanges",
            Action::Report => "reports",
        }
    }
}

/// The server's rate limits. The default is no limit at all (what tests that
/// build an [`crate::app::AppState`] directly get); `serve` sets them from
/// `--rate-limit-publish`, `--rate-limit-tokens` and `--rate-limit-reports`.
#[derive(Debug, Clone, Copy)]
pub struct RateLimits {
    pub publish: RateLimit,
    pub tokens: RateLimit,
    pub reports: RateLimit,
    /// Take the client IP from the last `X-Forwarded-For` hop (only behind a
    /// proxy that appends it), instead of the TCP peer.
    pub trust_proxy: bool,
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits {
            publish: RateLimit::OFF,
            tokens: RateLimit::OFF,
            reports: RateLimit::OFF,
            trust_proxy: false,
        }
    }
}

impl RateLimits {
    fn limit(&self, action: Action) -> RateLimit {
        match action {
            Action::Publish => self.publish,
            Action::TokenCreate | Action::OidcExchange => self.tokens,
            Action::Report => self.reports,
        }
    }

    /// The client the per-IP limit counts: the TCP peer, or with
    /// `trust_proxy` the last address in `X-Forwarded-For` — the one our own
    /// proxy appended; earlier entries come from the client and can be forged.
    /// An IPv6 address stands for its /64 ([`ip_subject`]).
    pub fn client_ip(&self, req: &HttpRequest) -> String {
        ip_subject(&self.client_addr(req))
    }

    fn client_addr(&self, req: &HttpRequest) -> String {
        if self.trust_proxy {
            let last = req
                .headers()
                .get_all("x-forwarded-for")
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .map(str::trim)
                .filter(|hop| !hop.is_empty())
                .last()
                .map(strip_port);
            if let Some(ip) = last {
                return ip;
            }
        }
        req.peer_addr()
            .map(|a| a.ip().to_string())
            .unwrap_or_else(|| "unknown".to_string())
    }

    /// Count one `action` by `token_id`, its user and the request's IP; `429`
    /// with `Retry-After` when the token's, the user's or the IP's count
    /// passes the limit.
    pub async fn check(
        &self,
        db: &Db,
        req: &HttpRequest,
        action: Action,
        token_id: i64,
    ) -> AppResult<()> {
        self.enforce(db, req, action, Some(token_id)).await
    }

    /// Count one `action` by the request's IP alone (for requests made
    /// without a token); `429` with `Retry-After` past the limit.
    pub async fn check_ip(&self, db: &Db, req: &HttpRequest, action: Action) -> AppResult<()> {
        self.enforce(db, req, action, None).await
    }

    async fn enforce(
        &self,
        db: &Db,
        req: &HttpRequest,
        action: Action,
        token_id: Option<i64>,
    ) -> AppResult<()> {
        let limit = self.limit(action);
        if limit.is_off() {
            return Ok(());
        }
        let window = limit.window.as_secs().max(1) as i64;
        let now = chrono::Utc::now().timestamp();
        let window_start = now - now.rem_euclid(window);
        let ip = self.client_ip(req);
        let counts = db
            .write(move |conn| {
                let mut counted = Vec::with_capacity(3);
                if let Some(token_id) = token_id {
                    let user_id: i64 = tokens::table
                        .find(token_id)
                        .select(tokens::user_id)
                        .first(conn)?;
                    counted.push((format!("token:{token_id}"), "token"));
                    counted.push((format!("user:{user_id}"), "user"));
                }
                counted.push((format!("ip:{ip}"), "IP address"));
                let mut counts = Vec::with_capacity(counted.len());
                for (subject, per) in &counted {
                    let hits = bump(conn, action.as_str(), subject, window_start, window)?;
                    counts.push((*per, hits));
                }
                Ok(counts)
            })
            .await?;
        for (per, hits) in counts {
            if hits > i64::from(limit.max) {
                let retry_after = u64::try_from(window_start + window - now)
                    .unwrap_or(1)
                    .max(1);
                return Err(AppError::RateLimited {
                    detail: format!(
                        "rate limit: at most {} {} per {} per {per}; try again in {retry_after} s",
                        limit.max,
                        action.noun(),
                        describe_window(limit.window),
                    ),
                    retry_after,
                });
            }
        }
        Ok(())
    }
}

fn describe_window(window: Duration) -> String {
    match window.as_secs() {
        1 => "second".to_string(),
        60 => "minute".to_string(),
        3600 => "hour".to_string(),
        86_400 => "day".to_string(),
        s => format!("{s} seconds"),
    }
}

/// The per-IP subject for a client address: an IPv4 address as it is, an
/// IPv6 address as its /64 network (`2001:db8:1:2::/64`), since one client
/// can rotate through a whole /64; an IPv4-mapped IPv6 address as the IPv4.
fn ip_subject(addr: &str) -> String {
    match addr.parse::<IpAddr>() {
        Ok(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let net = u128::from(v6) & !((1u128 << 64) - 1);
                format!("{}/64", Ipv6Addr::from(net))
            }
        },
        Ok(IpAddr::V4(v4)) => v4.to_string(),
        Err(_) => addr.to_string(),
    }
}

/// `1.2.3.4:5678` → `1.2.3.4`, `[::1]:80` → `::1`; an address without a port stays.
fn strip_port(addr: &str) -> String {
    if addr.parse::<IpAddr>().is_ok() {
        return addr.to_string();
    }
    match addr.parse::<std::net::SocketAddr>() {
        Ok(sa) => sa.ip().to_string(),
        Err(_) => addr.to_string(),
    }
}

#[derive(QueryableByName)]
struct Hits {
    #[diesel(sql_type = BigInt)]
    hits: i64,
}

/// The fixed-window upsert; the SQL is the same on both backends except for
/// the placeholders.
const BUMP_SQLITE: &str = "INSERT INTO rate_limits (action, subject, window_start, hits) VALUES (?, ?, ?, 1) \
     ON CONFLICT (action, subject) DO UPDATE SET \
       hits = CASE WHEN rate_limits.window_start >= excluded.window_start THEN rate_limits.hits + 1 ELSE 1 END, \
       window_start = CASE WHEN rate_limits.window_start >= excluded.window_start THEN rate_limits.window_start ELSE excluded.window_start END \
     RETURNING hits";
const BUMP_POSTGRES: &str = "INSERT INTO rate_limits (action, subject, window_start, hits) VALUES ($1, $2, $3, 1) \
     ON CONFLICT (action, subject) DO UPDATE SET \
       hits = CASE WHEN rate_limits.window_start >= excluded.window_start THEN rate_limits.hits + 1 ELSE 1 END, \
       window_start = CASE WHEN rate_limits.window_start >= excluded.window_start THEN rate_limits.window_start ELSE excluded.window_start END \
     RETURNING hits";
const PRUNE_SQLITE: &str = "DELETE FROM rate_limits WHERE action = ? AND window_start < ?";
const PRUNE_POSTGRES: &str = "DELETE FROM rate_limits WHERE action = $1 AND window_start < $2";

/// Count one hit for (`action`, `subject`) in the window starting at
/// `window_start`; returns the hits in that window so far. The first hit of a
/// new window also deletes the action's counters of past windows, so the
/// table holds at most one row per active subject.
fn bump(
    conn: &mut DbConnection,
    action: &str,
    subject: &str,
    window_start: i64,
    window: i64,
) -> AppResult<i64> {
    let hits = match conn {
        DbConnection::Sqlite(c) => {
            diesel::sql_query(BUMP_SQLITE)
                .bind::<Text, _>(action)
                .bind::<Text, _>(subject)
                .bind::<BigInt, _>(window_start)
                .get_result::<Hits>(c)?
                .hits
        }
        DbConnection::Postgresql(c) => {
            diesel::sql_query(BUMP_POSTGRES)
                .bind::<Text, _>(action)
                .bind::<Text, _>(subject)
                .bind::<BigInt, _>(window_start)
                .get_result::<Hits>(c)?
                .hits
        }
    };
    if hits == 1 {
        let stale = window_start - window;
        match conn {
            DbConnection::Sqlite(c) => diesel::sql_query(PRUNE_SQLITE)
                .bind::<Text, _>(action)
                .bind::<BigInt, _>(stale)
                .execute(c)?,
            DbConnection::Postgresql(c) => diesel::sql_query(PRUNE_POSTGRES)
                .bind::<Text, _>(action)
                .bind::<BigInt, _>(stale)
                .execute(c)?,
        };
    }
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_limits() {
        assert_eq!(
            RateLimit::parse("60/min").unwrap(),
            RateLimit {
                max: 60,
                window: Duration::from_secs(60)
            }
        );
        assert_eq!(
            RateLimit::parse("10/s").unwrap(),
            RateLimit {
                max: 10,
                window: Duration::from_secs(1)
            }
        );
        assert_eq!(
            RateLimit::parse("5/10s").unwrap(),
            RateLimit {
                max: 5,
                window: Duration::from_secs(10)
            }
        );
        assert_eq!(
            RateLimit::parse("1000/hour").unwrap().window,
            Duration::from_secs(3600)
        );
        assert!(RateLimit::parse("0").unwrap().is_off());
        assert!(RateLimit::parse("0/min").unwrap().is_off());
        assert_eq!(RateLimit::parse("60/min").unwrap().to_string(), "60/min");
    }

    #[test]
    fn refuses_bad_limits_with_the_syntax() {
        for bad in ["", "60", "x/min", "60/fortnight", "60/0s", "-1/min"] {
            let err = RateLimit::parse(bad).unwrap_err();
            assert!(err.contains("COUNT/PERIOD"), "{bad}: {err}");
        }
    }

    #[test]
    fn strips_ports() {
        assert_eq!(strip_port("1.2.3.4:5678"), "1.2.3.4");
        assert_eq!(strip_port("[::1]:80"), "::1");
        assert_eq!(strip_port("10.0.0.1"), "10.0.0.1");
    }

    #[test]
    fn ipv6_counts_per_64() {
        assert_eq!(ip_subject("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
        assert_eq!(ip_subject("2001:db8:1:2:ffff:1:2:3"), "2001:db8:1:2::/64");
        assert_eq!(ip_subject("2001:db8:1:3::1"), "2001:db8:1:3::/64");
        assert_eq!(ip_subject("::ffff:10.0.0.1"), "10.0.0.1");
        assert_eq!(ip_subject("10.0.0.1"), "10.0.0.1");
        assert_eq!(ip_subject("unknown"), "unknown");
    }
}
