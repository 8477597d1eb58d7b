//! `madang arena` on a database: a local run saves every game in SQLite
//! (also after a resume, each game once); on a real PostgreSQL
//! (`MADANG_TEST_POSTGRES`, which `.ci/run` sets; under `CI` the tests fail
//! without it), two worker processes share a tournament and play every game
//! exactly once, a worker killed with SIGKILL mid-game loses only that
//! game, which the other worker plays again, one stopped with SIGTERM hands
//! its game back at once, and a decided SPRT stops every worker.

// kill(2) to send SIGTERM needs unsafe; the block says why it is sound.
#![allow(unsafe_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use store::{JobStatus, RecentFilter, Store, TournamentGame};

const EXE: &str = env!("CARGO_BIN_EXE_madang");

/// Small, fast games: tiny node limits, adjudicated draws.
const ENGINES: [&str; 4] = [
    "--engine",
    "builtin:nodes=60,hash=1",
    "--engine",
    "builtin:nodes=20,hash=1",
];

/// How long any command of these tests may run.
const LIMIT: Duration = Duration::from_secs(300);

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("madang-arena-db-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The PostgreSQL to test against; `None` (the test is skipped) only
/// outside CI.
fn postgres() -> Option<String> {
    match std::env::var("MADANG_TEST_POSTGRES") {
        Ok(url) => Some(url),
        Err(_) if std::env::var_os("CI").is_some() => {
            panic!("CI is set but MADANG_TEST_POSTGRES is not: .ci/run starts the PostgreSQL")
        }
        Err(_) => {
            eprintln!("skipped: set MADANG_TEST_POSTGRES to a PostgreSQL database URL");
            None
        }
    }
}

/// The store, and the runtime its connections live on.
struct Db {
    rt: tokio::runtime::Runtime,
    store: Store,
}

impl Db {
    fn open(url: &str) -> Db {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let store = rt.block_on(Store::open(url)).unwrap();
        Db { rt, store }
    }

    fn call<T>(&self, f: impl Future<Output = store::Result<T>>) -> T {
        self.rt.block_on(f).unwrap()
    }

    fn close(self) {
        self.rt.block_on(self.store.close());
    }
}

/// Runs `madang` to its end (killed past [`LIMIT`]).
fn madang(args: &[&str], env: &[(&str, &str)]) -> Output {
    let child = spawn(args, env);
    wait(child)
}

fn spawn(args: &[&str], env: &[(&str, &str)]) -> Child {
    Command::new(EXE)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait(mut child: Child) -> Output {
    let deadline = Instant::now() + LIMIT;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "madang ran past {LIMIT:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The game numbers a run or worker printed as played.
fn played(stdout: &str) -> Vec<u32> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("game ")?.split(':').next()?.parse().ok())
        .collect()
}

/// Starts `madang arena worker` named `name` on tournament `id`.
fn worker(url: &str, id: &str, name: &str, args: &[&str], env: &[(&str, &str)]) -> Child {
    let mut all = vec![
        "arena",
        "worker",
        "--database",
        url,
        "--tournament",
        id,
        "--name",
        name,
    ];
    all.extend(args);
    spawn(&all, env)
}

/// Submits a tournament with these settings and returns its id.
fn submit(url: &str, settings: &[&str]) -> String {
    let mut args = vec!["arena", "--database", url, "--submit"];
    args.extend(settings);
    let stdout = ok(&madang(&args, &[]));
    let id = stdout.lines().next().unwrap().trim().to_owned();
    assert_eq!(id.len(), 32, "{stdout}");
    id
}

/// The variable that makes [`submit_switched`]'s first entrant misbehave.
const SWITCH: &str = "ARENA_TEST_SWITCH";

/// Submits a tournament of `games` games whose first entrant is `madang
/// brain`, but under a worker with [`SWITCH`] set first runs the shell
/// command `then`.
fn submit_switched(url: &str, then: &str, games: &str) -> String {
    let first =
        format!("sh -c 'test -z \"${SWITCH}\" || {then}; exec {EXE} brain --nodes 60 --hash-mb 1'");
    submit(
        url,
        &[
            &["--engine", &first],
            &ENGINES[..2],
            &["--games", games, "--draw-after", "40", "--startup", "60s"],
        ]
        .concat(),
    )
}

/// Checks that every game of tournament `id` is done, stored once under
/// the tournament, and returns them.
fn all_done_once(db: &Db, id: &str, games: usize) -> Vec<TournamentGame> {
    let jobs = db.call(db.store.tournament_games(id));
    assert_eq!(jobs.len(), games);
    let mut linked = BTreeSet::new();
    for job in &jobs {
        let JobStatus::Done { result, game_id } = &job.status else {
            panic!("game {} is not done: {:?}", job.index, job.status);
        };
        assert_eq!(result["index"], job.index, "{result}");
        linked.insert(game_id.clone());
        let game = db.call(db.store.game(game_id)).unwrap();
        assert_eq!(game.summary.tournament.as_deref(), Some(id));
    }
    let filter = RecentFilter {
        tournament: Some(id.to_owned()),
        limit: RecentFilter::MAX_LIMIT,
        ..RecentFilter::default()
    };
    let listed: BTreeSet<String> = db
        .call(db.store.recent(&filter))
        .games
        .into_iter()
        .map(|g| g.id)
        .collect();
    assert_eq!(
        listed, linked,
        "every game stored once, under its tournament"
    );
    jobs
}

/// Waits until the first game of tournament `id` is claimed, and returns
/// by whom.
fn claimed_first(db: &Db, id: &str) -> String {
    let deadline = Instant::now() + LIMIT;
    loop {
        let jobs = db.call(db.store.tournament_games(id));
        if let JobStatus::Claimed { worker, .. } = &jobs[0].status {
            return worker.clone();
        }
        assert!(Instant::now() < deadline, "never claimed: {jobs:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn tournament_of(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("database.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["tournament"].as_str().unwrap().to_owned()
}

#[test]
fn a_local_run_saves_every_game_in_sqlite_once() {
    let root = tmp("sqlite");
    let url = format!("sqlite://{}", root.join("madang.db").display());
    let run = |out: &Path, database: bool| {
        let mut args = vec!["arena", "--out", out.to_str().unwrap()];
        args.extend(ENGINES);
        args.extend(["--games", "4", "--draw-after", "40", "--seed", "3"]);
        if database {
            args.extend(["--database", &url]);
        }
        played(&ok(&madang(&args, &[])))
    };
    // Saved as they end.
    let live = root.join("live");
    assert_eq!(run(&live, true).len(), 4);
    let id = tournament_of(&live);
    let db = Db::open(&url);
    let jobs = all_done_once(&db, &id, 4);
    let lines = std::fs::read_to_string(live.join("results.jsonl")).unwrap();
    for (job, line) in jobs.iter().zip(lines.lines()) {
        let JobStatus::Done { result, .. } = &job.status else {
            unreachable!()
        };
        let line: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(result["moves"], line["moves"]);
        assert_eq!(job.attempts, 1);
    }
    // Run again on the same directory: nothing left to play, nothing
    // stored twice.
    let again = ok(&madang(
        &[
            "arena",
            "--resume",
            live.to_str().unwrap(),
            "--database",
            &url,
        ],
        &[],
    ));
    assert!(played(&again).is_empty(), "{again}");
    all_done_once(&db, &id, 4);
    // Played without a database, then resumed with one: the games already
    // played go into the database too.
    let later = root.join("later");
    assert_eq!(run(&later, false).len(), 4);
    ok(&madang(
        &[
            "arena",
            "--resume",
            later.to_str().unwrap(),
            "--database",
            &url,
        ],
        &[],
    ));
    let later_id = tournament_of(&later);
    assert_ne!(later_id, id);
    all_done_once(&db, &later_id, 4);
    db.close();
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn two_workers_play_every_game_exactly_once() {
    let Some(url) = postgres() else { return };
    two_workers(&url);
}

#[test]
fn two_workers_share_a_sqlite_file_too() {
    let root = tmp("workers");
    two_workers(&format!("sqlite://{}", root.join("madang.db").display()));
    std::fs::remove_dir_all(&root).unwrap();
}

/// Two worker processes play a tournament of 8 games on `url`.
fn two_workers(url: &str) {
    let url = url.to_owned();
    let id = submit(
        &url,
        &[
            &ENGINES[..],
            &["--games", "8", "--seed", "5", "--draw-after", "40"],
        ]
        .concat(),
    );
    let (a, b) = (
        worker(&url, &id, "a", &[], &[]),
        worker(&url, &id, "b", &[], &[]),
    );
    let (a, b) = (played(&ok(&wait(a))), played(&ok(&wait(b))));
    let mut all: Vec<u32> = a.iter().chain(&b).copied().collect();
    all.sort_unstable();
    assert_eq!(all, (1..=8).collect::<Vec<_>>(), "a {a:?}, b {b:?}");
    let db = Db::open(&url);
    let jobs = all_done_once(&db, &id, 8);
    assert!(jobs.iter().all(|j| j.attempts == 1));
    let status = ok(&madang(&["arena", "status", "--database", &url, &id], &[]));
    assert!(
        status.contains("8 games: 8 played, 0 being played, 0 pending"),
        "{status}"
    );
    db.close();
}

#[test]
fn a_killed_worker_loses_only_its_game() {
    let Some(url) = postgres() else { return };
    // The first entrant is `madang brain`, except under the worker that is
    // to die: there it never answers START (and ends when its pipe closes
    // with the killed worker).
    let id = submit_switched(&url, "exec cat >/dev/null", "2");
    let lease = ["--lease", "2s"];
    let mut doomed = worker(&url, &id, "doomed", &lease, &[(SWITCH, "1")]);
    let db = Db::open(&url);
    assert_eq!(claimed_first(&db, &id), "doomed/1");
    doomed.kill().unwrap(); // SIGKILL
    let out = doomed.wait_with_output().unwrap();
    assert!(played(&String::from_utf8_lossy(&out.stdout)).is_empty());
    let mut survivor = played(&ok(&wait(worker(&url, &id, "survivor", &lease, &[]))));
    survivor.sort_unstable();
    assert_eq!(survivor, [1, 2]);
    let jobs = all_done_once(&db, &id, 2);
    let attempts: Vec<u32> = jobs.iter().map(|j| j.attempts).collect();
    assert_eq!(
        attempts,
        [2, 1],
        "the killed worker's game was played again"
    );
    db.close();
}

#[test]
fn the_sprt_stops_every_worker() {
    let Some(url) = postgres() else { return };
    // A strong and a weak engine: decided after a few opening pairs (four
    // sweeps of the weak one reach the upper bound, 1.39).
    let id = submit(
        &url,
        &[
            "-e",
            "builtin:nodes=3000,hash=1",
            "-e",
            "builtin:nodes=30,hash=1",
            "--games",
            "40",
            "--draw-after",
            "60",
            "--sprt",
            "elo0=0 elo1=200 alpha=0.2 beta=0.2",
        ],
    );
    let (a, b) = (
        worker(&url, &id, "a", &[], &[]),
        worker(&url, &id, "b", &[], &[]),
    );
    let (a, b) = (ok(&wait(a)), ok(&wait(b)));
    for out in [&a, &b] {
        assert!(out.contains("games played; the SPRT has decided"), "{out}");
    }
    let played = played(&a).len() + played(&b).len();
    assert!((4..40).contains(&played), "{played} games played");
    let status = ok(&madang(&["arena", "status", "--database", &url, &id], &[]));
    assert!(
        status.contains(&format!("40 games: {played} played, 0 being played")),
        "{status}"
    );
    let verdict = status.lines().find(|l| l.starts_with("SPRT: ")).unwrap();
    assert!(
        verdict.ends_with("H0") || verdict.ends_with("H1"),
        "{status}"
    );
}

#[test]
fn an_interrupted_worker_hands_its_game_back_at_once() {
    let Some(url) = postgres() else { return };
    // Never answers START: the game lasts until the worker is stopped.
    let id = submit(
        &url,
        &[
            &["-e", "sh -c 'exec cat >/dev/null'"],
            &ENGINES[..2],
            &["--games", "2", "--startup", "60s"],
        ]
        .concat(),
    );
    let child = worker(&url, &id, "stopped", &["--lease", "10m"], &[]);
    let db = Db::open(&url);
    claimed_first(&db, &id);
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) },
        0
    );
    let out = wait(child);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("interrupted after 0 games"), "{stderr}");
    // Pending again long before the 10-minute lease.
    let jobs = db.call(db.store.tournament_games(&id));
    assert_eq!(jobs[0].status, JobStatus::Pending);
    assert_eq!(jobs[0].attempts, 1);
    assert_eq!(jobs[1].status, JobStatus::Pending);
    db.close();
}

#[test]
fn a_worker_past_its_lease_loses_the_game_to_another() {
    let Some(url) = postgres() else { return };
    // Under the slow worker, the first entrant starts 5 s late: its claim
    // (never heart-beaten within the other worker's 1 s lease) is taken.
    let id = submit_switched(&url, "sleep 5", "1");
    let slow = worker(&url, &id, "slow", &[], &[(SWITCH, "1")]);
    let db = Db::open(&url);
    claimed_first(&db, &id);
    let quick = worker(&url, &id, "quick", &["--lease", "1s"], &[]);
    assert_eq!(played(&ok(&wait(quick))), [1]);
    let slow = wait(slow);
    assert_eq!(played(&ok(&slow)), [] as [u32; 0]);
    let stderr = String::from_utf8_lossy(&slow.stderr);
    assert!(stderr.contains("result dropped"), "{stderr}");
    let jobs = all_done_once(&db, &id, 1);
    assert_eq!(jobs[0].attempts, 2);
    db.close();
}
