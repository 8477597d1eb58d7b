//! The schema migrations, embedded in the binary so that `madang` stays one
//! file. Each backend has its own directory because their SQL differs in
//! small ways (how an auto-numbered key is declared); a new migration goes in
//! both, with the next version number.

use std::borrow::Cow;

use futures::future::BoxFuture;
use sqlx::error::BoxDynError;
use sqlx::migrate::{MigrateError, Migration, MigrationSource, MigrationType, Migrator};

/// Migrations as `(version, description, SQL)`.
#[derive(Debug)]
struct Embedded(&'static [(i64, &'static str, &'static str)]);

impl<'s> MigrationSource<'s> for Embedded {
    fn resolve(self) -> BoxFuture<'s, Result<Vec<Migration>, BoxDynError>> {
        Box::pin(async move {
            Ok(self
                .0
                .iter()
                .map(|&(version, description, sql)| {
                    Migration::new(
                        version,
                        Cow::Borrowed(description),
                        MigrationType::Simple,
                        Cow::Borrowed(sql),
                        false,
                    )
                })
                .collect())
        })
    }
}

const SQLITE: &[(i64, &str, &str)] = &[(
    1,
    "games and tournaments",
    include_str!("../migrations/sqlite/0001_games_and_tournaments.sql"),
)];

const POSTGRES: &[(i64, &str, &str)] = &[(
    1,
    "games and tournaments",
    include_str!("../migrations/postgres/0001_games_and_tournaments.sql"),
)];

/// The SQLite schema.
pub(crate) async fn sqlite() -> Result<Migrator, MigrateError> {
    Migrator::new(Embedded(SQLITE)).await
}

/// The PostgreSQL schema.
pub(crate) async fn postgres() -> Result<Migrator, MigrateError> {
    Migrator::new(Embedded(POSTGRES)).await
}
