//! Enum columns — a publisher's tier, a version's execution kind and
//! format — are stored as their API ids (`trusted`, `function`, `matimo`)
//! in text columns. Every query reads them as typed values through
//! [`Stored`], the one conversion from the stored text:
//!
//! ```ignore
//! #[diesel(deserialize_as = Stored<Tier>)]
//! pub tier: Tier,
//! ```
//!
//! A value that is not a known id fails the query with a deserialization
//! error naming it (the server only ever writes `as_str()`). Writes store
//! the value's `as_str()`.

use std::str::FromStr;

use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::sql_types::Text;
use toolreg_core::{ExecutionKind, Format, Tier};

/// The value of an enum column, parsed from its stored id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, FromSqlRow)]
pub struct Stored<T>(pub T);

impl<T, DB> FromSql<Text, DB> for Stored<T>
where
    DB: Backend,
    String: FromSql<Text, DB>,
    T: FromStr<Err = String>,
{
    fn from_sql(bytes: DB::RawValue<'_>) -> deserialize::Result<Self> {
        let text = String::from_sql(bytes)?;
        text.parse()
            .map(Stored)
            .map_err(|e: String| format!("a stored enum column: {e}").into())
    }
}

macro_rules! stored_enums {
    ($($t:ty),*) => {$(
        impl From<Stored<$t>> for $t {
            fn from(stored: Stored<$t>) -> $t {
                stored.0
            }
        }
    )*};
}

stored_enums!(Tier, ExecutionKind, Format);

#[cfg(test)]
mod tests {
    use diesel::dsl::sql;
    use diesel::prelude::*;

    use super::*;
    use crate::db::DbConnection;

    fn read<T: FromStr<Err = String> + 'static>(
        conn: &mut DbConnection,
        text: &str,
    ) -> QueryResult<Stored<T>> {
        diesel::select(sql::<Text>(&format!("'{text}'"))).get_result(conn)
    }

    #[test]
    fn enum_columns_read_as_typed_values_and_unknown_ids_fail() {
        let mut conn =
            DbConnection::Sqlite(diesel::SqliteConnection::establish(":memory:").unwrap());
        assert_eq!(read::<Tier>(&mut conn, "trusted").unwrap().0, Tier::Trusted);
        assert_eq!(
            read::<ExecutionKind>(&mut conn, "http").unwrap().0,
            ExecutionKind::Http
        );
        assert_eq!(read::<Format>(&mut conn, "mcp").unwrap().0, Format::Mcp);
        // The cause names the column's kind and the stored text.
        let err = format!("{:?}", read::<Tier>(&mut conn, "root").unwrap_err());
        assert!(err.contains("unknown tier `root`"), "{err}");
        let err = format!("{:?}", read::<Format>(&mut conn, "Matimo").unwrap_err());
        assert!(err.contains("`Matimo`"), "{err}");
    }
}
