//! The store's side of arena runs that schedule their own games
//! (`record_game`: each game stored once, however often it is recorded)
//! and of workers that stop early (`release`), on SQLite and on
//! PostgreSQL (`MADANG_TEST_POSTGRES`; under `CI` the test fails without
//! it).

use omok::records::GameRecord;
use serde_json::json;
use store::{Error, JobStatus, NewJob, RecentFilter, Store};

/// SQLite in a temporary directory, and PostgreSQL when configured.
fn databases(dir: &tempfile::TempDir) -> Vec<String> {
    let mut urls = vec![format!(
        "sqlite://{}",
        dir.path().join("madang.db").display()
    )];
    match std::env::var("MADANG_TEST_POSTGRES") {
        Ok(url) => urls.push(url),
        Err(_) if std::env::var_os("CI").is_some() => {
            panic!("CI is set but MADANG_TEST_POSTGRES is not: .ci/run starts the PostgreSQL")
        }
        Err(_) => eprintln!("PostgreSQL skipped: set MADANG_TEST_POSTGRES to a database URL"),
    }
    urls
}

/// Any game will do: two moves, as Piskvork wrote them.
fn record() -> GameRecord {
    GameRecord::from_psq("Piskvorky 15x15, 11:11, 0\n8,8,0\n1,1,250\n-1\na\nb\n-1\n").unwrap()
}

fn jobs(n: usize) -> Vec<NewJob> {
    (0..n)
        .map(|i| NewJob {
            pairing: json!({ "index": i }),
            opening: String::new(),
        })
        .collect()
}

#[tokio::test]
async fn recorded_games_are_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    for url in databases(&dir) {
        let store = Store::open(&url).await.unwrap();
        let id = store
            .create_tournament(&json!({ "local": true }), &jobs(2))
            .await
            .unwrap();
        let first = store
            .record_game(&id, 1, &record(), &json!({ "index": 1 }))
            .await
            .unwrap();
        // Recorded again (a resumed run): the same game, nothing added.
        let again = store
            .record_game(&id, 1, &record(), &json!({ "index": 1, "again": true }))
            .await
            .unwrap();
        assert_eq!(again, first);
        let games = store.tournament_games(&id).await.unwrap();
        assert_eq!(games[0].status, JobStatus::Pending);
        assert_eq!(
            games[1].status,
            JobStatus::Done {
                result: json!({ "index": 1 }),
                game_id: first.clone(),
            }
        );
        assert_eq!(games[1].attempts, 1);
        // What a worker polls: the count, the games done, each one's row.
        assert_eq!(store.tournament_progress(&id).await.unwrap(), (2, vec![1]));
        assert_eq!(
            store.tournament_game(&id, 1).await.unwrap().as_ref(),
            Some(&games[1])
        );
        assert_eq!(store.tournament_game(&id, 2).await.unwrap(), None);
        assert!(matches!(
            store.tournament_progress("no-such-tournament").await,
            Err(Error::UnknownTournament(_))
        ));
        let filter = RecentFilter {
            tournament: Some(id.clone()),
            ..RecentFilter::default()
        };
        let listed = store.recent(&filter).await.unwrap().games;
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].id, first);
        // A game the tournament does not have.
        let err = store
            .record_game(&id, 2, &record(), &json!({}))
            .await
            .unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err}");
        // A worker's claim of the remaining game is refused once recorded
        // by the run itself.
        let job = store.claim_next(&id, "w").await.unwrap().unwrap();
        assert_eq!(job.index, 0);
        store
            .record_game(&id, 0, &record(), &json!({ "index": 0 }))
            .await
            .unwrap();
        let err = store.finish(&job, &record(), &json!({})).await.unwrap_err();
        assert!(matches!(err, Error::Lost { .. }), "{err}");
        store.close().await;
    }
}

#[tokio::test]
async fn a_released_claim_is_handed_out_again_at_once() {
    let dir = tempfile::tempdir().unwrap();
    for url in databases(&dir) {
        let store = Store::open(&url).await.unwrap();
        let id = store.create_tournament(&json!({}), &jobs(1)).await.unwrap();
        let job = store.claim_next(&id, "leaving").await.unwrap().unwrap();
        assert!(store.claim_next(&id, "other").await.unwrap().is_none());
        store.release(&job).await.unwrap();
        // Released once only; the old claim can no longer finish.
        assert!(matches!(store.release(&job).await, Err(Error::Lost { .. })));
        let again = store.claim_next(&id, "other").await.unwrap().unwrap();
        assert_eq!((again.index, again.attempt), (0, 2));
        assert!(matches!(
            store.finish(&job, &record(), &json!({})).await,
            Err(Error::Lost { .. })
        ));
        store.finish(&again, &record(), &json!({})).await.unwrap();
        store.close().await;
    }
}
