//! Injected write failures: a trigger that aborts inserts of one kind of
//! row, so a test can fail the last write of a change and check that the
//! change's other writes were rolled back with it. The SQL is given per
//! dialect; the caller runs it on its own connection.

/// The SQL dialect to write the trigger in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlDialect {
    Sqlite,
    Postgres,
}

/// Inserts into `table` whose `column` equals `value` fail with
/// `injected failure`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailingInsert {
    pub table: &'static str,
    pub column: &'static str,
    pub value: &'static str,
}

impl FailingInsert {
    pub fn new(table: &'static str, column: &'static str, value: &'static str) -> FailingInsert {
        FailingInsert {
            table,
            column,
            value,
        }
    }

    /// The statements that install the trigger.
    pub fn install_sql(&self, dialect: SqlDialect) -> String {
        let FailingInsert {
            table,
            column,
            value,
        } = self;
        match dialect {
            // The read first: a pooled connection parses `CREATE TRIGGER`
            // against the schema it last loaded, which may still hold the
            // trigger another connection has since dropped ("trigger
            // injected_failure already exists"). Reading the schema table
            // checks the schema's version and reloads it.
            SqlDialect::Sqlite => format!(
                "SELECT count(*) FROM sqlite_schema; \
                 CREATE TRIGGER injected_failure BEFORE INSERT ON {table} \
                 WHEN NEW.{column} = '{value}' \
                 BEGIN SELECT RAISE(ABORT, 'injected failure'); END;"
            ),
            SqlDialect::Postgres => format!(
                "CREATE FUNCTION injected_failure() RETURNS trigger AS $$ \
                 BEGIN RAISE EXCEPTION 'injected failure'; END $$ LANGUAGE plpgsql; \
                 CREATE TRIGGER injected_failure BEFORE INSERT ON {table} FOR EACH ROW \
                 WHEN (NEW.{column} = '{value}') EXECUTE FUNCTION injected_failure();"
            ),
        }
    }

    /// The statements that remove it again.
    pub fn remove_sql(&self, dialect: SqlDialect) -> String {
        match dialect {
            SqlDialect::Sqlite => "DROP TRIGGER injected_failure;".to_string(),
            SqlDialect::Postgres => format!(
                "DROP TRIGGER injected_failure ON {}; DROP FUNCTION injected_failure();",
                self.table
            ),
        }
    }
}
