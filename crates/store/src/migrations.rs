//! The schema migrations, embedded in the binary so that `madang` stays one
//! file. Both backends run the same SQL files except for the phrases they
//! spell differently, written `{name}` in the files and filled in per
//! backend here (an unfilled one is a syntax error on both). A new migration
//! goes in `migrations/` with the next version number.

use std::borrow::Cow;

use futures::future::BoxFuture;
use sqlx::error::BoxDynError;
use sqlx::migrate::{MigrateError, Migration, MigrationSource, MigrationType, Migrator};

/// The migrations as `(version, description, SQL)`.
const MIGRATIONS: &[(i64, &str, &str)] = &[(
    1,
    "games and tournaments",
    include_str!("../migrations/0001_games_and_tournaments.sql"),
)];

/// How a backend spells the phrases of the migrations.
#[derive(Debug, Clone, Copy)]
struct Dialect {
    /// An auto-numbered 64-bit primary key.
    serial_key: &'static str,
}

const SQLITE: Dialect = Dialect {
    serial_key: "INTEGER PRIMARY KEY AUTOINCREMENT",
};

const POSTGRES: Dialect = Dialect {
    serial_key: "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
};

impl<'s> MigrationSource<'s> for Dialect {
    fn resolve(self) -> BoxFuture<'s, Result<Vec<Migration>, BoxDynError>> {
        Box::pin(async move {
            Ok(MIGRATIONS
                .iter()
                .map(|&(version, description, sql)| {
                    Migration::new(
                        version,
                        Cow::Borrowed(description),
                        MigrationType::Simple,
                        Cow::Owned(sql.replace("{serial_key}", self.serial_key)),
                        false,
                    )
                })
                .collect())
        })
    }
}

/// The SQLite schema.
pub(crate) async fn sqlite() -> Result<Migrator, MigrateError> {
    Migrator::new(SQLITE).await
}

/// The PostgreSQL schema.
pub(crate) async fn postgres() -> Result<Migrator, MigrateError> {
    Migrator::new(POSTGRES).await
}
