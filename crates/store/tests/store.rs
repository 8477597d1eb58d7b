//! Every store operation against SQLite (a temporary file), and against
//! PostgreSQL too when `MADANG_TEST_POSTGRES` holds a database URL.
//!
//! Tests sharing the PostgreSQL database run at the same time, so each one
//! filters on names and tournaments of its own.

use std::collections::BTreeSet;
use std::time::Duration;

use omok::records::{GameRecord, MoveRecord};
use serde_json::json;
use store::{
    BingoCall, BingoGameRecord, BingoPlayer, BingoStanding, Error, GameKind, JobStatus, NewJob,
    RecentFilter, Record, Store,
};
use tempfile::TempDir;

/// A database to test against, and what keeps it alive.
struct Db {
    url: String,
    backend: &'static str,
    _dir: Option<TempDir>,
}

/// A fresh SQLite file, and PostgreSQL if configured.
fn databases() -> Vec<Db> {
    let dir = tempfile::tempdir().unwrap();
    let mut dbs = vec![Db {
        url: format!("sqlite://{}", dir.path().join("madang.db").display()),
        backend: "sqlite",
        _dir: Some(dir),
    }];
    if let Ok(url) = std::env::var("MADANG_TEST_POSTGRES") {
        dbs.push(Db {
            url,
            backend: "postgres",
            _dir: None,
        });
    }
    dbs
}

/// A name no other test (or earlier run on a shared database) uses.
fn unique(prefix: &str) -> String {
    format!("{prefix}-{:016x}", rand::random::<u64>())
}

fn omok_record(black: &str, white: &str) -> GameRecord {
    GameRecord {
        id: "1700000000000-t1-1".to_owned(),
        rule: renju::Rule::Renju,
        black: black.to_owned(),
        white: white.to_owned(),
        started_unix_ms: 1_700_000_000_000,
        setup: Vec::new(),
        moves: ["h8", "h9", "i8", "i9", "j8", "j9", "k8", "k9", "l8"]
            .iter()
            .map(|p| MoveRecord {
                point: p.parse().unwrap(),
                millis: Some(250),
            })
            .collect(),
        winner: Some(renju::Color::Black),
        reason: omok::referee::EndReason::Five,
    }
}

fn bingo_record(names: &[&str]) -> BingoGameRecord {
    let size = 3;
    BingoGameRecord {
        size,
        lines: 1,
        first_caller: 0,
        started_unix_ms: 1_700_000_000_000,
        players: names
            .iter()
            .enumerate()
            .map(|(seat, name)| BingoPlayer {
                name: (*name).to_owned(),
                card: Some((1..=9).collect()),
                rank: if seat == 0 { 1 } else { 2 },
                bingo_on_call: (seat == 0).then_some(3),
                standing: Some(if seat == 0 {
                    BingoStanding::Bingo
                } else {
                    BingoStanding::Unfinished
                }),
            })
            .collect(),
        calls: [1, 2, 3]
            .iter()
            .enumerate()
            .map(|(i, &number)| BingoCall {
                seat: i % names.len(),
                number,
            })
            .collect(),
        reason: "bingo".to_owned(),
    }
}

#[tokio::test]
async fn omok_games_round_trip() {
    for db in databases() {
        let store = Store::open(&db.url).await.unwrap();
        assert_eq!(store.backend_name(), db.backend);
        let record = omok_record(&unique("black"), &unique("white"));
        let id = store.save_omok(&record).await.unwrap();
        assert_eq!(id.len(), 32, "{id}");
        let game = store.game(&id).await.unwrap().expect("saved game");
        assert_eq!(game.record, Record::Omok(record.clone()));
        let summary = game.summary;
        assert_eq!(summary.id, id);
        assert_eq!(summary.kind, GameKind::Omok);
        assert_eq!(summary.rule, "renju");
        assert_eq!(
            summary.players,
            [record.black.clone(), record.white.clone()]
        );
        assert_eq!(
            (summary.result.as_str(), summary.reason.as_str()),
            ("black", "five")
        );
        assert_eq!(summary.tournament, None);
        assert!(summary.ended_unix_ms > 1_700_000_000_000);
        // Ids are fresh each time, even for the same record.
        assert_ne!(store.save_omok(&record).await.unwrap(), id);
        assert_eq!(store.game(&"0".repeat(32)).await.unwrap(), None);
        store.close().await;
    }
}

#[tokio::test]
async fn bingo_games_round_trip_and_bad_ones_are_refused() {
    for db in databases() {
        let store = Store::open(&db.url).await.unwrap();
        let names = [unique("ann"), unique("bob"), unique("cy")];
        let record = bingo_record(&names.iter().map(String::as_str).collect::<Vec<_>>());
        let id = store.save_bingo(&record).await.unwrap();
        let game = store.game(&id).await.unwrap().expect("saved game");
        assert_eq!(game.record, Record::Bingo(record.clone()));
        assert_eq!(game.summary.kind, GameKind::Bingo);
        assert_eq!(game.summary.rule, "bingo 3x3 1 lines");
        assert_eq!(game.summary.players, names);
        assert_eq!(game.summary.result, names[0]);

        let mut draw = record.clone();
        draw.players.truncate(2);
        draw.players[1].rank = 1;
        draw.calls.truncate(2);
        let id = store.save_bingo(&draw).await.unwrap();
        assert_eq!(
            store.game(&id).await.unwrap().unwrap().summary.result,
            "draw"
        );

        // A player who left before filling a card has none.
        let mut left = record.clone();
        left.players[2].card = None;
        left.players[2].rank = 3;
        left.players[2].standing = Some(BingoStanding::Forfeited);
        let id = store.save_bingo(&left).await.unwrap();
        assert_eq!(
            store.game(&id).await.unwrap().unwrap().record,
            Record::Bingo(left)
        );

        let mut bad = Vec::new();
        let mut one = record.clone();
        one.players.truncate(1);
        bad.push(one);
        let mut nine = record.clone();
        nine.players = vec![record.players[0].clone(); 9];
        bad.push(nine);
        let mut card = record.clone();
        card.players[1].card = Some(vec![2; 9]);
        bad.push(card);
        let mut call = record.clone();
        call.calls.push(BingoCall { seat: 0, number: 1 });
        bad.push(call);
        let mut seat = record.clone();
        seat.calls[0].seat = 3;
        bad.push(seat);
        let mut rank = record.clone();
        rank.players[2].rank = 0;
        bad.push(rank);
        let mut lines = record.clone();
        lines.lines = 9;
        bad.push(lines);
        let mut standing = record.clone();
        standing.players[1].standing = Some(BingoStanding::Bingo);
        bad.push(standing);
        let mut standing = record.clone();
        standing.players[0].standing = Some(BingoStanding::Forfeited);
        bad.push(standing);
        for record in bad {
            let err = store.save_bingo(&record).await.unwrap_err();
            assert!(matches!(err, Error::Invalid(_)), "{err}");
        }
        let filter = RecentFilter {
            player: Some(names[2].clone()),
            ..RecentFilter::default()
        };
        // The first game and the one seat 2 left.
        assert_eq!(store.recent(&filter).await.unwrap().games.len(), 2);
    }
}

/// Records saved before players' standings were kept read back, with no
/// standing; the rest of the record as it was.
#[tokio::test]
async fn bingo_records_saved_without_standings_read_back() {
    for db in databases() {
        let store = Store::open(&db.url).await.unwrap();
        let record = bingo_record(&[&unique("ann"), &unique("bob")]);
        let id = store.save_bingo(&record).await.unwrap();
        let mut old = serde_json::to_value(&record).unwrap();
        for player in old["players"].as_array_mut().unwrap() {
            player.as_object_mut().unwrap().remove("standing").unwrap();
        }
        sqlx::any::install_default_drivers();
        let admin = sqlx::AnyPool::connect(&db.url).await.unwrap();
        // The JSON holds no quote: names are letters, digits and dashes.
        sqlx::query(&format!(
            "UPDATE games SET record = '{old}' WHERE id = '{id}'"
        ))
        .execute(&admin)
        .await
        .unwrap();
        let Record::Bingo(read) = store.game(&id).await.unwrap().unwrap().record else {
            panic!("not bingo");
        };
        let mut want = record.clone();
        for player in &mut want.players {
            player.standing = None;
        }
        assert_eq!(read, want);
        assert_eq!(read.players[0].bingo_on_call, Some(3));
        read.validate().unwrap();
        admin.close().await;
        store.close().await;
    }
}

#[tokio::test]
async fn recent_lists_newest_first_by_pages_and_filters() {
    for db in databases() {
        let store = Store::open(&db.url).await.unwrap();
        let me = unique("me");
        let other = unique("other");
        let mut ids = Vec::new();
        for i in 0..5 {
            let record = if i % 2 == 0 {
                omok_record(&me, &other)
            } else {
                omok_record(&other, &me)
            };
            ids.push(store.save_omok(&record).await.unwrap());
        }
        ids.push(store.save_bingo(&bingo_record(&[&me, "x"])).await.unwrap());
        store
            .save_omok(&omok_record(&other, &unique("third")))
            .await
            .unwrap();
        ids.reverse();

        let mut filter = RecentFilter {
            player: Some(me.clone()),
            limit: 4,
            ..RecentFilter::default()
        };
        let first = store.recent(&filter).await.unwrap();
        let listed: Vec<_> = first.games.iter().map(|g| g.id.clone()).collect();
        assert_eq!(listed, ids[..4]);
        filter.before = Some(first.next.expect("a second page"));
        let second = store.recent(&filter).await.unwrap();
        let listed: Vec<_> = second.games.iter().map(|g| g.id.clone()).collect();
        assert_eq!(listed, ids[4..]);
        assert_eq!(second.next, None);

        // The cursor survives its text form.
        let cursor = first.next.unwrap();
        assert_eq!(cursor.to_string().parse::<store::Cursor>().unwrap(), cursor);
        assert!("x".parse::<store::Cursor>().is_err());

        filter.before = None;
        filter.limit = 100;
        filter.kind = Some(GameKind::Omok);
        assert_eq!(store.recent(&filter).await.unwrap().games.len(), 5);
        filter.kind = Some(GameKind::Bingo);
        let bingo = store.recent(&filter).await.unwrap();
        assert_eq!(bingo.games.len(), 1);
        assert_eq!(bingo.games[0].id, ids[0]);

        // Without filters the newest game overall comes first; a limit of 0
        // still lists one.
        let newest = store
            .recent(&RecentFilter {
                limit: 0,
                ..RecentFilter::default()
            })
            .await
            .unwrap();
        assert_eq!(newest.games.len(), 1);
        assert!(newest.next.is_some());
    }
}

#[tokio::test]
async fn saved_games_survive_reopening() {
    for db in databases() {
        let store = Store::open(&db.url).await.unwrap();
        let record = omok_record(&unique("a"), &unique("b"));
        let id = store.save_omok(&record).await.unwrap();
        store.close().await;
        drop(store);
        let store = Store::open(&db.url).await.unwrap();
        assert_eq!(
            store.game(&id).await.unwrap().unwrap().record,
            Record::Omok(record)
        );
    }
}

#[tokio::test]
async fn a_bare_path_is_sqlite_and_other_schemes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub dir?#x.db");
    let store = Store::open(path.to_str().unwrap()).await.unwrap();
    assert_eq!(store.backend_name(), "sqlite");
    let id = store.save_omok(&omok_record("a", "b")).await.unwrap();
    assert!(path.exists());
    store.close().await;
    let store = Store::open(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    assert!(store.game(&id).await.unwrap().is_some());
    for url in ["mysql://localhost/x", ""] {
        assert!(
            matches!(Store::open(url).await, Err(Error::Url(_))),
            "{url}"
        );
    }
}

#[tokio::test]
async fn a_corrupt_column_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("madang.db").display());
    let store = Store::open(&url).await.unwrap();
    let record = omok_record("a", "b");
    let id = store.save_omok(&record).await.unwrap();
    let other = store.save_omok(&record).await.unwrap();
    let raw = sqlx::SqlitePool::connect(&url).await.unwrap();
    // The journal mode is kept in the file: the store made it WAL.
    let (mode,): (String,) = sqlx::query_as("PRAGMA journal_mode")
        .fetch_one(&raw)
        .await
        .unwrap();
    assert_eq!(mode, "wal");
    sqlx::query("UPDATE games SET record = '{\"id\": 3' WHERE id = $1")
        .bind(&id)
        .execute(&raw)
        .await
        .unwrap();
    sqlx::query("UPDATE games SET players = 'null', kind = 'chess' WHERE id = $1")
        .bind(&other)
        .execute(&raw)
        .await
        .unwrap();
    let err = store.game(&id).await.unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains(&id), "{err}");
    let err = store.game(&other).await.unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    let err = store.recent(&RecentFilter::default()).await.unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");

    let tournament = store
        .create_tournament(
            &json!({}),
            &[NewJob {
                pairing: json!([0, 1]),
                opening: String::new(),
            }],
        )
        .await
        .unwrap();
    sqlx::query("UPDATE tournament_games SET pairing = 'oops'")
        .execute(&raw)
        .await
        .unwrap();
    let err = store.claim_next(&tournament, "w").await.unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    sqlx::query("UPDATE tournament_games SET pairing = '[]', status = 'done'")
        .execute(&raw)
        .await
        .unwrap();
    let err = store.tournament_games(&tournament).await.unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
}

fn jobs(n: usize) -> Vec<NewJob> {
    (0..n)
        .map(|i| NewJob {
            pairing: json!({"black": i % 3, "white": (i + 1) % 3}),
            opening: format!("opening {i}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_workers_never_claim_the_same_game() {
    const GAMES: usize = 40;
    for db in databases() {
        let store = Store::open(&db.url).await.unwrap();
        let settings = json!({"rule": "renju", "rounds": 2});
        let tournament = store
            .create_tournament(&settings, &jobs(GAMES))
            .await
            .unwrap();
        let stored = store.tournament(&tournament).await.unwrap().unwrap();
        assert_eq!(stored.settings, settings);

        // Each worker has a pool of its own, as on separate machines.
        let mut workers = Vec::new();
        for w in 0..4 {
            let store = Store::open(&db.url).await.unwrap();
            let tournament = tournament.clone();
            workers.push(tokio::spawn(async move {
                let worker = format!("worker-{w}");
                let mut claimed = Vec::new();
                while let Some(job) = store.claim_next(&tournament, &worker).await.unwrap() {
                    assert_eq!(job.opening, format!("opening {}", job.index));
                    assert_eq!(job.attempt, 1);
                    let result = json!({"worker": worker});
                    store
                        .finish(&job, &omok_record("x", "y"), &result)
                        .await
                        .unwrap();
                    claimed.push(job.index);
                }
                claimed
            }));
        }
        let mut all = Vec::new();
        for worker in workers {
            all.extend(worker.await.unwrap());
        }
        all.sort_unstable();
        let expected: Vec<u32> = (0..GAMES as u32).collect();
        assert_eq!(all, expected, "every game claimed exactly once");

        let games = store.tournament_games(&tournament).await.unwrap();
        assert_eq!(games.len(), GAMES);
        let mut ids = BTreeSet::new();
        for game in &games {
            let JobStatus::Done { game_id, .. } = &game.status else {
                panic!("game {} is {:?}", game.index, game.status);
            };
            assert_eq!(game.attempts, 1);
            ids.insert(game_id.clone());
        }
        let listed = store
            .recent(&RecentFilter {
                tournament: Some(tournament.clone()),
                limit: 100,
                ..RecentFilter::default()
            })
            .await
            .unwrap();
        let listed: BTreeSet<_> = listed.games.into_iter().map(|g| g.id).collect();
        assert_eq!(listed, ids);
        assert_eq!(store.claim_next(&tournament, "late").await.unwrap(), None);
    }
}

#[tokio::test]
async fn a_stale_game_is_released_and_replayed_by_another_worker() {
    for db in databases() {
        let store = Store::open(&db.url).await.unwrap();
        let tournament = store
            .create_tournament(&json!(null), &jobs(2))
            .await
            .unwrap();
        let dead = store
            .claim_next(&tournament, "dead")
            .await
            .unwrap()
            .unwrap();
        assert_eq!((dead.index, dead.attempt), (0, 1));
        assert_eq!(dead.pairing, json!({"black": 0, "white": 1}));
        store.heartbeat(&dead).await.unwrap();
        let games = store.tournament_games(&tournament).await.unwrap();
        assert!(
            matches!(&games[0].status, JobStatus::Claimed { worker, .. } if worker == "dead"),
            "{games:?}"
        );
        assert_eq!(games[1].status, JobStatus::Pending);

        // Released only once old enough.
        let long = Duration::from_secs(3600);
        assert_eq!(store.release_stale(&tournament, long).await.unwrap(), 0);
        assert_eq!(
            store
                .release_stale(&tournament, Duration::ZERO)
                .await
                .unwrap(),
            1
        );
        assert_eq!(
            store
                .release_stale(&tournament, Duration::ZERO)
                .await
                .unwrap(),
            0
        );
        assert_eq!(
            store.tournament_games(&tournament).await.unwrap()[0].status,
            JobStatus::Pending
        );

        let alive = store
            .claim_next(&tournament, "alive")
            .await
            .unwrap()
            .unwrap();
        assert_eq!((alive.index, alive.attempt), (0, 2));
        assert_eq!(alive.opening, dead.opening);

        // The dead worker comes back too late: nothing it sends counts.
        let record = omok_record("late", "late");
        for err in [
            store
                .finish(&dead, &record, &json!("late"))
                .await
                .unwrap_err(),
            store.heartbeat(&dead).await.unwrap_err(),
        ] {
            assert!(matches!(err, Error::Lost { index: 0, .. }), "{err}");
        }
        let id = store
            .finish(&alive, &omok_record("x", "y"), &json!({"winner": "black"}))
            .await
            .unwrap();
        let err = store.finish(&alive, &record, &json!(1)).await.unwrap_err();
        assert!(matches!(err, Error::Lost { .. }), "{err}");
        let games = store.tournament_games(&tournament).await.unwrap();
        assert_eq!(
            games[0].status,
            JobStatus::Done {
                result: json!({"winner": "black"}),
                game_id: id.clone()
            }
        );
        assert_eq!(games[0].attempts, 2);
        let game = store.game(&id).await.unwrap().unwrap();
        assert_eq!(
            game.summary.tournament.as_deref(),
            Some(tournament.as_str())
        );
        assert_eq!(game.summary.players, ["x", "y"]);
        let late = store
            .recent(&RecentFilter {
                player: Some("late".to_owned()),
                tournament: Some(tournament.clone()),
                ..RecentFilter::default()
            })
            .await
            .unwrap();
        assert!(late.games.is_empty(), "the late record was not saved");

        let next = store
            .claim_next(&tournament, "alive")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(next.index, 1);
    }
}

#[tokio::test]
async fn an_unknown_tournament_is_an_error() {
    for db in databases() {
        let store = Store::open(&db.url).await.unwrap();
        let id = "f".repeat(32);
        assert_eq!(store.tournament(&id).await.unwrap(), None);
        for err in [
            store.claim_next(&id, "w").await.unwrap_err(),
            store.tournament_games(&id).await.unwrap_err(),
        ] {
            assert!(matches!(err, Error::UnknownTournament(_)), "{err}");
        }
        // A tournament without games exists, and has nothing to claim.
        let empty = store.create_tournament(&json!({}), &[]).await.unwrap();
        assert_eq!(store.claim_next(&empty, "w").await.unwrap(), None);
        assert_eq!(store.tournament_games(&empty).await.unwrap(), []);
    }
}

#[tokio::test]
async fn a_finished_bingo_room_is_saved_as_its_record() {
    use bingo::room::{Input, Room, RoomConfig};
    use std::time::Instant;

    let names = [unique("ann"), unique("bob"), unique("cy")];
    let mut room = Room::new(RoomConfig {
        size: 4,
        lines: 2,
        first: 1,
        players: names.to_vec(),
        call_limit: Some(Duration::from_secs(5)),
        grace: Duration::from_secs(60),
        seed: 3,
    })
    .unwrap();
    let start = Instant::now();
    for seat in 0..3 {
        room.handle(seat, Input::Shuffle, start);
    }
    assert_eq!(BingoGameRecord::from_room(&room, 0), None);
    // Nobody calls: the room calls for each player in turn until the end.
    while let Some(at) = room.poll_timeout() {
        room.handle_timeout(at);
    }
    let record = BingoGameRecord::from_room(&room, 1_700_000_000_000).expect("over");
    assert_eq!(record.first_caller, 1);
    assert_eq!(record.calls[0].seat, 1);
    assert_eq!(record.reason, "bingo");
    assert!(record.players.iter().any(|p| p.rank == 1));
    for player in &record.players {
        let want = match player.bingo_on_call {
            Some(_) => BingoStanding::Bingo,
            None => BingoStanding::Unfinished,
        };
        assert_eq!(player.standing, Some(want));
    }
    record.validate().unwrap();
    for db in databases() {
        let store = Store::open(&db.url).await.unwrap();
        let id = store.save_bingo(&record).await.unwrap();
        let game = store.game(&id).await.unwrap().unwrap();
        assert_eq!(game.record, Record::Bingo(record.clone()));
        assert_eq!(game.summary.players, names);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_saves_are_all_committed_and_readable() {
    for db in databases() {
        let store = Store::open(&db.url).await.unwrap();
        let player = unique("many");
        let records: Vec<GameRecord> = (0..1200)
            .map(|i| omok_record(&player, &format!("opponent-{i}")))
            .collect();
        let ids = futures::future::join_all(records.iter().map(|r| store.save_omok(r))).await;
        let ids: Vec<String> = ids.into_iter().map(Result::unwrap).collect();
        assert_eq!(ids.iter().collect::<BTreeSet<_>>().len(), ids.len());
        store.close().await;
        drop(store);
        // Durable: a fresh pool on the same database reads every one back.
        let store = Store::open(&db.url).await.unwrap();
        for (id, record) in ids.iter().zip(&records) {
            let game = store.game(id).await.unwrap().expect("saved game");
            assert_eq!(game.record, Record::Omok(record.clone()), "{}", db.backend);
        }
        let filter = RecentFilter {
            player: Some(player),
            limit: RecentFilter::MAX_LIMIT,
            ..RecentFilter::default()
        };
        assert_eq!(store.recent(&filter).await.unwrap().games.len(), 200);
    }
}

#[tokio::test]
async fn a_refused_save_fails_alone_and_the_others_are_committed() {
    for db in databases() {
        let store = Store::open(&db.url).await.unwrap();
        // The database refuses one player's name: its game row is inserted
        // first, so only a rollback of that game alone keeps the others.
        let poison = unique("poison");
        let tag = poison.replace('-', "_");
        let setup = if db.backend == "sqlite" {
            vec![format!(
                "CREATE TRIGGER {tag} BEFORE INSERT ON game_players WHEN NEW.name = '{poison}' \
                 BEGIN SELECT RAISE(ABORT, 'refused'); END"
            )]
        } else {
            vec![
                format!(
                    "CREATE FUNCTION {tag}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
                     IF NEW.name = '{poison}' THEN RAISE EXCEPTION 'refused'; END IF; \
                     RETURN NEW; END $$"
                ),
                format!(
                    "CREATE TRIGGER {tag} BEFORE INSERT ON game_players \
                     FOR EACH ROW EXECUTE FUNCTION {tag}()"
                ),
            ]
        };
        sqlx::any::install_default_drivers();
        let admin = sqlx::AnyPool::connect(&db.url).await.unwrap();
        for sql in &setup {
            sqlx::query(sql).execute(&admin).await.unwrap();
        }
        let player = unique("fine");
        let records: Vec<GameRecord> = (0..40)
            .map(|i| {
                if i % 10 == 3 {
                    omok_record(&player, &poison)
                } else {
                    omok_record(&player, &format!("opponent-{i}"))
                }
            })
            .collect();
        let results = futures::future::join_all(records.iter().map(|r| store.save_omok(r))).await;
        if db.backend == "postgres" {
            sqlx::query(&format!("DROP TRIGGER {tag} ON game_players"))
                .execute(&admin)
                .await
                .unwrap();
            sqlx::query(&format!("DROP FUNCTION {tag}"))
                .execute(&admin)
                .await
                .unwrap();
        }
        for (i, (result, record)) in results.iter().zip(&records).enumerate() {
            match result {
                Err(Error::Database(e)) if i % 10 == 3 => {
                    assert!(e.to_string().contains("refused"), "{e}");
                }
                Ok(id) if i % 10 != 3 => {
                    let game = store.game(id).await.unwrap().expect("saved game");
                    assert_eq!(game.record, Record::Omok(record.clone()));
                }
                other => panic!("save {i} on {}: {other:?}", db.backend),
            }
        }
        // Nothing of the refused games was kept.
        let filter = RecentFilter {
            player: Some(player),
            limit: RecentFilter::MAX_LIMIT,
            ..RecentFilter::default()
        };
        let listed = store.recent(&filter).await.unwrap().games;
        assert_eq!(listed.len(), 36);
        assert!(listed.iter().all(|g| !g.players.contains(&poison)));
    }
}
