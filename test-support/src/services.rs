//! A PostgreSQL database and an S3 bucket of a test's own, on the servers
//! `scripts/test` starts: PostgreSQL from `TOOLREG_TEST_DATABASE_URL`
//! (default `postgres://postgres@127.0.0.1:5432/postgres`, a database the
//! tests may create databases from), S3 from `TOOLREG_TEST_S3_ENDPOINT`
//! (default `http://127.0.0.1:9000`, a moto server that takes any
//! credentials). A service that can't be reached is handled by the
//! [`unavailable`](crate::unavailable) rule.

use diesel::prelude::*;
use rand::distr::{Alphanumeric, SampleString};

use crate::{unavailable, Backend};

const DEFAULT_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";
const DEFAULT_S3_ENDPOINT: &str = "http://127.0.0.1:9000";

/// The PostgreSQL URL the tests create their databases from.
pub fn database_admin_url() -> String {
    std::env::var("TOOLREG_TEST_DATABASE_URL").unwrap_or_else(|_| DEFAULT_DATABASE_URL.into())
}

/// The S3 server the tests create their buckets on.
pub fn s3_endpoint() -> String {
    std::env::var("TOOLREG_TEST_S3_ENDPOINT").unwrap_or_else(|_| DEFAULT_S3_ENDPOINT.into())
}

/// A connection to the PostgreSQL server at `url`. OpenSSL is initialized
/// first without its exit handler, as the server does for its own
/// connections: libpq's TLS state must outlive a test binary's last
/// connection.
pub fn connect_postgres(url: &str) -> ConnectionResult<PgConnection> {
    openssl_sys::init();
    PgConnection::establish(url)
}

/// `url` with its database name replaced by `database`.
fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let base = base.rsplit_once('/').map_or(base, |(b, _)| b);
    match query {
        Some(q) => format!("{base}/{database}?{q}"),
        None => format!("{base}/{database}"),
    }
}

fn suffix() -> String {
    Alphanumeric
        .sample_string(&mut rand::rng(), 12)
        .to_ascii_lowercase()
}

/// A database and/or a bucket created for one test. The database is
/// dropped with this value (moto keeps buckets in memory only).
#[derive(Debug)]
pub struct Services {
    database: Option<String>,
    bucket: Option<String>,
}

impl Services {
    /// What `backend` needs: nothing for SQLite (files in the data
    /// directory), a database and a bucket for PostgreSQL.
    pub fn for_backend(backend: Backend) -> Option<Services> {
        match backend {
            Backend::Sqlite => Some(Services {
                database: None,
                bucket: None,
            }),
            Backend::Postgres => Services::postgres_and_s3(),
        }
    }

    /// A fresh PostgreSQL database and S3 bucket.
    pub fn postgres_and_s3() -> Option<Services> {
        let database = create_database()?;
        let mut services = Services {
            database: Some(database),
            bucket: None,
        };
        services.bucket = Some(create_bucket()?);
        Some(services)
    }

    /// A fresh PostgreSQL database only (blobs stay in local files).
    pub fn postgres_only() -> Option<Services> {
        Some(Services {
            database: Some(create_database()?),
            bucket: None,
        })
    }

    /// A fresh S3 bucket only (the database stays SQLite).
    pub fn s3_only() -> Option<Services> {
        Some(Services {
            database: None,
            bucket: Some(create_bucket()?),
        })
    }

    /// The URL of the database, if one was made.
    pub fn database_url(&self) -> Option<String> {
        self.database
            .as_deref()
            .map(|name| with_database(&database_admin_url(), name))
    }

    /// The storage URL of the bucket, if one was made.
    pub fn storage_url(&self) -> Option<String> {
        self.bucket
            .as_deref()
            .map(|bucket| format!("s3://{bucket}/registry"))
    }

    /// The `object_store` options that reach the bucket (empty without one).
    pub fn s3_options(&self) -> Vec<(String, String)> {
        if self.bucket.is_none() {
            return Vec::new();
        }
        [
            ("aws_endpoint", s3_endpoint()),
            ("aws_allow_http", "true".into()),
            ("aws_access_key_id", "test".into()),
            ("aws_secret_access_key", "test".into()),
            ("aws_region", "us-east-1".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// The environment a `toolreg-server` process (server or subcommand)
    /// needs to use these services.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = Vec::new();
        if let Some(url) = self.database_url() {
            env.push(("TOOLREG_DATABASE_URL".into(), url));
        }
        if let Some(storage) = self.storage_url() {
            env.push(("TOOLREG_STORAGE".into(), storage));
            for (key, value) in self.s3_options() {
                let key = if key == "aws_endpoint" {
                    "AWS_ENDPOINT_URL".to_string()
                } else {
                    key.to_ascii_uppercase()
                };
                env.push((key, value));
            }
        }
        env
    }
}

impl Drop for Services {
    fn drop(&mut self) {
        if let Some(name) = &self.database {
            if let Ok(mut conn) = connect_postgres(&database_admin_url()) {
                let _ = diesel::sql_query(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .execute(&mut conn);
            }
        }
    }
}

fn create_database() -> Option<String> {
    let admin = database_admin_url();
    let mut conn = match connect_postgres(&admin) {
        Ok(conn) => conn,
        Err(e) => return unavailable(format!("PostgreSQL unreachable at {admin}: {e}")),
    };
    let name = format!("toolreg_test_{}", suffix());
    if let Err(e) = diesel::sql_query(format!("CREATE DATABASE {name}")).execute(&mut conn) {
        return unavailable(format!(
            "PostgreSQL at {admin}: CREATE DATABASE {name}: {e}"
        ));
    }
    Some(name)
}

fn create_bucket() -> Option<String> {
    let endpoint = s3_endpoint();
    let bucket = format!("toolreg-test-{}", suffix());
    let client = match reqwest::blocking::Client::builder().no_proxy().build() {
        Ok(client) => client,
        Err(e) => return unavailable(format!("HTTP client for S3: {e}")),
    };
    match client.put(format!("{endpoint}/{bucket}")).send() {
        Ok(res) if res.status().is_success() => Some(bucket),
        Ok(res) => unavailable(format!(
            "S3 server at {endpoint}: creating bucket {bucket} answered {}",
            res.status()
        )),
        Err(e) => unavailable(format!("S3 server unreachable at {endpoint}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn the_database_name_is_replaced() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/postgres", "t1"),
            "postgres://postgres@127.0.0.1:5432/t1"
        );
        assert_eq!(
            with_database("postgres://u@h/admin?sslmode=disable", "t1"),
            "postgres://u@h/t1?sslmode=disable"
        );
    }
}
