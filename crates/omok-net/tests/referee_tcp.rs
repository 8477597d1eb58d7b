//! The referee over real loopback TCP: the glue between sockets and the
//! table state machine (whose rules are unit-tested without a network).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use omok::records::GameRecord;
use omok::referee::EndReason;
use omok_net::server::{Referee, RefereeConfig};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use renju::{Color, Game, GameResult, Point, Rule};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

/// Far beyond any step of these tests: only a hung referee reaches it.
const PATIENCE: Duration = Duration::from_secs(5);

fn p(s: &str) -> u8 {
    s.parse::<Point>().unwrap().to_byte()
}

async fn start(config: RefereeConfig) -> (SocketAddr, JoinHandle<std::io::Result<()>>) {
    let referee = Referee::bind("127.0.0.1:0".parse().unwrap(), config)
        .await
        .unwrap();
    let addr = referee.local_addr();
    (addr, tokio::spawn(referee.run()))
}

async fn serve(config: RefereeConfig) -> SocketAddr {
    start(config).await.0
}

/// A player speaking raw bytes.
struct Client(TcpStream);

impl Client {
    async fn open(addr: SocketAddr) -> Client {
        let s = TcpStream::connect(addr).await.unwrap();
        s.set_nodelay(true).unwrap();
        Client(s)
    }

    /// Connects and sends Connect, expecting the reply `[0, seat, 1]`.
    async fn seated(addr: SocketAddr, seat: u8) -> Client {
        let mut c = Client::open(addr).await;
        c.send(&[0, 0, 0]).await;
        c.expect([0, seat, 1]).await;
        c
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.0.write_all(bytes).await.unwrap();
    }

    async fn recv(&mut self) -> [u8; 3] {
        let mut buf = [0; 3];
        tokio::time::timeout(PATIENCE, self.0.read_exact(&mut buf))
            .await
            .expect("referee silent")
            .expect("connection lost");
        buf
    }

    async fn expect(&mut self, frame: [u8; 3]) {
        assert_eq!(self.recv().await, frame);
    }

    /// The referee closes: end of stream, nothing more.
    async fn expect_closed(&mut self) {
        let mut buf = [0; 1];
        let n = tokio::time::timeout(PATIENCE, self.0.read(&mut buf))
            .await
            .expect("referee did not close")
            .unwrap_or(0);
        assert_eq!(n, 0, "unexpected byte {}", buf[0]);
    }

    /// Nothing has arrived yet.
    fn nothing_yet(&self) -> bool {
        let mut buf = [0; 3];
        matches!(self.0.try_read(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
    }
}

/// Two seated, ready players past the start Updates.
async fn game(addr: SocketAddr) -> (Client, Client) {
    let mut black = Client::seated(addr, 0).await;
    let mut white = Client::seated(addr, 1).await;
    black.send(&[1, 0, 1]).await;
    white.send(&[1, 0, 1]).await;
    black.expect([2, 0, 0]).await;
    white.expect([2, 1, 0]).await;
    (black, white)
}

/// Plays `moves` alternately from black, checking both Updates each time.
async fn play(black: &mut Client, white: &mut Client, moves: &str) {
    for (i, m) in moves.split_whitespace().enumerate() {
        let (mover, other) = if i % 2 == 0 {
            (&mut *black, &mut *white)
        } else {
            (&mut *white, &mut *black)
        };
        mover.send(&[3, 0, p(m)]).await;
        mover.expect([2, 1, p(m)]).await;
        other.expect([2, 0, p(m)]).await;
    }
}

const FIVE: &str = "h8 a1 i8 a2 j8 a3 k8 a4";

#[tokio::test]
async fn a_whole_game_then_both_closed_then_the_next_game() {
    let addr = serve(RefereeConfig::default()).await;
    for _ in 0..2 {
        let (mut black, mut white) = game(addr).await;
        play(&mut black, &mut white, FIVE).await;
        black.send(&[3, 0, p("l8")]).await;
        black.expect([4, 1, p("l8")]).await;
        white.expect([4, 0, p("l8")]).await;
        black.expect_closed().await;
        white.expect_closed().await;
    }
}

#[tokio::test]
async fn third_connection_is_refused_and_closed() {
    let addr = serve(RefereeConfig::default()).await;
    let _black = Client::seated(addr, 0).await;
    let _white = Client::seated(addr, 1).await;
    let mut third = Client::open(addr).await;
    third.send(&[0, 0, 0]).await;
    third.expect([0, 2, 2]).await;
    third.expect_closed().await;
}

#[tokio::test]
async fn frames_split_byte_by_byte_and_coalesced() {
    let addr = serve(RefereeConfig::default()).await;
    // Black sends Connect and Ready in one write.
    let mut black = Client::open(addr).await;
    black.send(&[0, 0, 0, 1, 0, 1]).await;
    black.expect([0, 0, 1]).await;
    // White sends its frames one byte at a time, each a separate segment.
    let mut white = Client::open(addr).await;
    for byte in [0, 0, 0, 1, 0] {
        white.send(&[byte]).await;
        white.0.flush().await.unwrap();
    }
    white.expect([0, 1, 1]).await;
    assert!(white.nothing_yet());
    white.send(&[1]).await;
    black.expect([2, 0, 0]).await;
    white.expect([2, 1, 0]).await;
    for byte in [3, 0, p("h8")] {
        black.send(&[byte]).await;
    }
    black.expect([2, 1, p("h8")]).await;
    white.expect([2, 0, p("h8")]).await;
    // White's Put and a stray Ready (ignored mid-game) in one write.
    white.send(&[3, 0, p("h9"), 1, 0, 0]).await;
    white.expect([2, 1, p("h9")]).await;
    black.expect([2, 0, p("h9")]).await;
}

#[tokio::test]
async fn disconnect_and_half_close_mid_game_lose() {
    let addr = serve(RefereeConfig::default()).await;
    let (mut black, white) = game(addr).await;
    drop(white);
    black.expect([4, 1, 0]).await;
    black.expect_closed().await;

    let (mut black, mut white) = game(addr).await;
    play(&mut black, &mut white, "h8").await;
    black.0.shutdown().await.unwrap();
    white.expect([4, 1, 0]).await;
    // Still connected for reading: the half-closer hears its loss.
    black.expect([4, 0, 0]).await;
    black.expect_closed().await;
}

#[tokio::test]
async fn illegal_puts_over_the_wire() {
    let addr = serve(RefereeConfig::default()).await;
    let cases: [(&str, bool, [u8; 3]); 4] = [
        ("h8", true, [3, 0, p("h8")]), // white: occupied
        ("", true, [3, 0, 0xf7]),      // out of turn (white first)
        ("", false, [3, 0, 0x7f]),     // off the board
        ("h8", false, [5, 0, 0]),      // unknown command from black
    ];
    for (moves, white_sends, frame) in cases {
        let (mut black, mut white) = game(addr).await;
        play(&mut black, &mut white, moves).await;
        let (mut culprit, mut other) = if white_sends {
            (white, black)
        } else {
            (black, white)
        };
        culprit.send(&frame).await;
        culprit.expect([4, 0, 0]).await;
        other.expect([4, 1, 0]).await;
    }
}

#[tokio::test]
async fn forbidden_point_depends_on_the_rule() {
    // rules.md's W.BBB.W: with the vertical three h7 h8 h9, h8 is a
    // double-three under renju-simplified only.
    let setup = "g8 e8 i8 k8 h7 a1 h9 a3";
    for (rule, forbidden) in [(Rule::RenjuSimplified, true), (Rule::Renju, false)] {
        let addr = serve(RefereeConfig {
            rule,
            ..RefereeConfig::default()
        })
        .await;
        let (mut black, mut white) = game(addr).await;
        play(&mut black, &mut white, setup).await;
        if forbidden {
            black.send(&[3, 0, p("h8")]).await;
            black.expect([4, 0, 0]).await;
            white.expect([4, 1, 0]).await;
        } else {
            play(&mut black, &mut white, "h8").await;
        }
    }
}

#[tokio::test]
async fn a_full_board_is_a_draw() {
    let text = include_str!("../../omok/tests/data/draw-freestyle.txt");
    let moves = text.lines().find(|l| !l.starts_with('#')).unwrap();
    let (most, last) = moves.rsplit_once(' ').unwrap();
    let addr = serve(RefereeConfig {
        rule: Rule::Freestyle,
        ..RefereeConfig::default()
    })
    .await;
    let (mut black, mut white) = game(addr).await;
    play(&mut black, &mut white, most).await;
    black.send(&[3, 0, p(last)]).await;
    black.expect([4, 2, p(last)]).await;
    white.expect([4, 2, p(last)]).await;
}

#[tokio::test]
async fn turn_clock_with_a_short_limit() {
    let turn = Duration::from_millis(200);
    let addr = serve(RefereeConfig {
        turn_time: turn,
        ..RefereeConfig::default()
    })
    .await;
    let (mut black, mut white) = game(addr).await;
    play(&mut black, &mut white, "h8").await;
    let handed_over = Instant::now();
    // White stays silent.
    black.expect([4, 1, 1]).await;
    white.expect([4, 0, 1]).await;
    assert!(handed_over.elapsed() >= turn - Duration::from_millis(5));
}

#[tokio::test]
async fn ready_withdrawn_before_the_start() {
    let addr = serve(RefereeConfig::default()).await;
    // Frames of different connections have no order on the wire: black's
    // Ready and withdrawal go out before white even connects.
    let mut black = Client::seated(addr, 0).await;
    black.send(&[1, 0, 1]).await;
    black.send(&[1, 0, 0]).await;
    let mut white = Client::seated(addr, 1).await;
    // A second Connect from a seated player is ignored.
    white.send(&[0, 0, 0]).await;
    white.send(&[1, 0, 1]).await;
    // Had the game started, this Put would be a move (or, out of order, a
    // loss for black announced to white too); before the start it only
    // closes black.
    black.send(&[3, 0, p("h8")]).await;
    black.expect([4, 0, 0]).await;
    black.expect_closed().await;
    let mut black = Client::seated(addr, 0).await;
    black.send(&[1, 0, 1]).await;
    black.expect([2, 0, 0]).await;
    white.expect([2, 1, 0]).await;
    // Connect mid-game: ignored as well.
    black.send(&[0, 0, 0]).await;
    play(&mut black, &mut white, "h8 h9").await;
}

#[tokio::test]
async fn before_the_start() {
    let addr = serve(RefereeConfig::default()).await;
    // A seat freed before the start goes to the next player, with its colour;
    // the other player's Ready stands.
    let black = Client::seated(addr, 0).await;
    let mut white = Client::seated(addr, 1).await;
    white.send(&[1, 0, 1]).await;
    drop(black);
    let mut black = Client::open(addr).await;
    // The referee may see the new Connect before the old player's close.
    loop {
        black.send(&[0, 0, 0]).await;
        match black.recv().await {
            [0, 0, 1] => break,
            [0, 2, 2] => black = Client::open(addr).await,
            other => panic!("unexpected {other:?}"),
        }
    }
    black.send(&[1, 0, 1]).await;
    black.expect([2, 0, 0]).await;
    white.expect([2, 1, 0]).await;

    // A bad frame before the start: [4, 0, 0] to the sender only.
    let addr = serve(RefereeConfig::default()).await;
    let mut black = Client::seated(addr, 0).await;
    let mut white = Client::seated(addr, 1).await;
    white.send(&[3, 0, p("h8")]).await;
    white.expect([4, 0, 0]).await;
    white.expect_closed().await;
    assert!(black.nothing_yet());
    let mut white = Client::seated(addr, 1).await;
    black.send(&[1, 0, 1]).await;
    white.send(&[1, 0, 1]).await;
    black.expect([2, 0, 0]).await;
    white.expect([2, 1, 0]).await;

    // Anything but Connect from an unseated connection: closed silently.
    let mut stranger = Client::open(addr).await;
    stranger.send(&[1, 0, 1]).await;
    stranger.expect_closed().await;
}

#[tokio::test]
async fn idle_players_and_silent_connections_are_dropped() {
    let addr = serve(RefereeConfig {
        idle_timeout: Duration::from_millis(150),
        connect_timeout: Duration::from_millis(150),
        ..RefereeConfig::default()
    })
    .await;
    let mut silent = Client::open(addr).await;
    let mut idle = Client::seated(addr, 0).await;
    idle.expect([4, 0, 1]).await;
    idle.expect_closed().await;
    silent.expect_closed().await;
    // The seat is free again.
    let _black = Client::seated(addr, 0).await;
}

#[tokio::test]
async fn two_tables_play_while_a_third_client_stalls() {
    let addr = serve(RefereeConfig {
        tables: 2,
        turn_time: Duration::from_secs(3),
        ..RefereeConfig::default()
    })
    .await;
    // Silent, never sends Connect.
    let _lurker = Client::open(addr).await;
    // Table 0: black stalls on its first move.
    let (mut stalled_black, mut stalled_white) = game(addr).await;
    // Table 1 seats the next two and plays a whole game meanwhile.
    let (mut black, mut white) = game(addr).await;
    // A client flooding garbage before Connect changes nothing either.
    let mut flood = Client::open(addr).await;
    let _ = flood.0.write_all(&[9; 3000]).await;
    play(&mut black, &mut white, FIVE).await;
    black.send(&[3, 0, p("l8")]).await;
    black.expect([4, 1, p("l8")]).await;
    white.expect([4, 0, p("l8")]).await;
    // Every seat is still taken at table 0, and table 1 is free again.
    assert!(stalled_black.nothing_yet() && stalled_white.nothing_yet());
    let _next = Client::seated(addr, 0).await;
    stalled_black.send(&[3, 0, p("h8")]).await;
    stalled_black.expect([2, 1, p("h8")]).await;
    stalled_white.expect([2, 0, p("h8")]).await;
}

#[tokio::test]
async fn a_flood_of_pointless_frames_changes_nothing() {
    let addr = serve(RefereeConfig::default()).await;
    let (mut black, white) = game(addr).await;
    // Ready mid-game is valid and ignored, however often it comes.
    for _ in 0..1000 {
        black.send(&[1, 0, 1]).await;
    }
    black.send(&[3, 0, p("h8")]).await;
    black.expect([2, 1, p("h8")]).await;
    drop(white);
    black.expect([4, 1, 0]).await;
}

/// A player choosing uniformly among the legal points, keeping its own
/// board from the Updates; returns its colour, its own view of the result
/// and the End frame.
async fn random_player(addr: SocketAddr, rule: Rule, seed: u64) -> (Color, Game, [u8; 3]) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut c = Client::open(addr).await;
    c.send(&[0, 0, 0, 1, 0, 1]).await;
    let [0, seat, 1] = c.recv().await else {
        panic!("not seated");
    };
    let colour = if seat == 0 {
        Color::Black
    } else {
        Color::White
    };
    let mut game = Game::new(rule);
    let mut started = false;
    loop {
        let frame = c.recv().await;
        match frame {
            [2, turn, data] => {
                if started {
                    game.play(Point::from_byte(data).unwrap()).unwrap();
                }
                started = true;
                if turn == 0 {
                    let p = *game.legal_moves().choose(&mut rng).unwrap();
                    c.send(&[3, 0, p.to_byte()]).await;
                }
            }
            [4, ..] => return (colour, game, frame),
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[tokio::test]
async fn random_bots_play_to_the_end_under_every_rule() {
    for (i, rule) in Rule::ALL.into_iter().enumerate() {
        let addr = serve(RefereeConfig {
            rule,
            ..RefereeConfig::default()
        })
        .await;
        let first = tokio::spawn(random_player(addr, rule, 2 * i as u64));
        let second = tokio::spawn(random_player(addr, rule, 2 * i as u64 + 1));
        let (a, b) = (first.await.unwrap(), second.await.unwrap());
        for (colour, game, end) in [a, b] {
            // The last stone is in the End frame, not in an Update.
            let mut game = game;
            let last = Point::from_byte(end[2]).unwrap();
            let result = game.play(last).unwrap().cloned().expect("game over");
            let expected = match result {
                GameResult::Win { winner, .. } => u8::from(winner == colour),
                GameResult::Draw => 2,
            };
            assert_eq!(end, [4, expected, last.to_byte()], "{rule:?} {colour}");
        }
    }
}

#[tokio::test]
async fn games_limit_holds_across_tables() {
    let (addr, referee) = start(RefereeConfig {
        tables: 2,
        games: Some(1),
        ..RefereeConfig::default()
    })
    .await;
    let mut black = Client::seated(addr, 0).await;
    let mut white = Client::seated(addr, 1).await;
    let mut late_black = Client::seated(addr, 0).await;
    let mut late_white = Client::seated(addr, 1).await;
    black.send(&[1, 0, 1]).await;
    white.send(&[1, 0, 1]).await;
    black.expect([2, 0, 0]).await;
    white.expect([2, 1, 0]).await;
    // The only game allowed has started: the pair at the other table is
    // closed once ready, and newcomers are refused.
    late_black.send(&[1, 0, 1]).await;
    late_white.send(&[1, 0, 1]).await;
    late_black.expect_closed().await;
    late_white.expect_closed().await;
    let mut refused = Client::open(addr).await;
    refused.send(&[0, 0, 0]).await;
    refused.expect([0, 2, 2]).await;
    // Closing promptly spares the referee its linger before returning.
    drop((late_black, late_white, refused));
    play(&mut black, &mut white, FIVE).await;
    black.send(&[3, 0, p("l8")]).await;
    black.expect([4, 1, p("l8")]).await;
    white.expect([4, 0, p("l8")]).await;
    drop((black, white));
    tokio::time::timeout(PATIENCE, referee)
        .await
        .expect("run returns once the game has ended")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn records_of_finished_games() {
    let dir = std::env::temp_dir().join(format!("omok-records-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (addr, referee) = start(RefereeConfig {
        games: Some(2),
        turn_time: Duration::from_millis(300),
        record_dir: Some(dir.clone()),
        ..RefereeConfig::default()
    })
    .await;
    let (mut black, mut white) = game(addr).await;
    play(&mut black, &mut white, FIVE).await;
    black.send(&[3, 0, p("l8")]).await;
    black.expect([4, 1, p("l8")]).await;
    // Closing promptly spares the referee its linger before returning.
    drop((black, white));
    let (mut black, mut white) = game(addr).await;
    play(&mut black, &mut white, "h8").await;
    white.expect([4, 0, 1]).await;
    drop((black, white));
    tokio::time::timeout(PATIENCE, referee)
        .await
        .expect("run returns after --games games")
        .unwrap()
        .unwrap();

    let text = std::fs::read_to_string(dir.join("games.jsonl")).unwrap();
    let games = GameRecord::from_jsonl(&text).unwrap();
    assert_eq!(games.len(), 2);
    let five = &games[0];
    assert_eq!(five.rule, Rule::Renju);
    assert_eq!(
        (five.winner, five.reason),
        (Some(Color::Black), EndReason::Five)
    );
    let points: Vec<String> = five.moves.iter().map(|m| m.point.to_string()).collect();
    assert_eq!(points.join(" "), format!("{FIVE} l8"));
    assert!(
        five.moves
            .iter()
            .all(|m| m.millis.is_some_and(|ms| ms < 1000))
    );
    let black_addr: SocketAddr = five.black.parse().unwrap();
    assert!(black_addr.ip().is_loopback());
    let timeout = &games[1];
    assert_eq!(
        (timeout.winner, timeout.reason),
        (Some(Color::Black), EndReason::Timeout)
    );

    let sgf = GameRecord::read(&dir.join(format!("{}.sgf", five.id)), None).unwrap();
    assert_eq!(&sgf, five);
    let text = std::fs::read_to_string(dir.join(format!("{}.sgf", five.id))).unwrap();
    assert!(
        text.contains("SZ[15]RU[4]") && text.contains("RE[B+]"),
        "{text}"
    );
    let board = GameRecord::read(&dir.join("games.jsonl"), Some(&five.id))
        .unwrap()
        .final_board()
        .unwrap();
    assert_eq!(board.stone_count(), 9);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn repeated_ready_0_does_not_hold_a_seat() {
    let addr = serve(RefereeConfig {
        idle_timeout: Duration::from_millis(300),
        ..RefereeConfig::default()
    })
    .await;
    let mut stubborn = Client::seated(addr, 0).await;
    let started = Instant::now();
    let (mut reader, mut writer) = stubborn.0.split();
    let dropped = async {
        let mut frame = [0; 3];
        let insist = async {
            // Ready(0) every 50 ms, far more often than the idle limit.
            while writer.write_all(&[1, 0, 0]).await.is_ok() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            std::future::pending::<()>().await;
        };
        tokio::select! {
            read = reader.read_exact(&mut frame) => read.map(|_| frame).unwrap(),
            () = insist => unreachable!(),
        }
    };
    let frame = tokio::time::timeout(PATIENCE, dropped)
        .await
        .expect("never dropped");
    assert_eq!(frame, [4, 0, 1]);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn silent_connections_beyond_the_cap_never_lock_players_out() {
    let addr = serve(RefereeConfig {
        max_connections: 8,
        connect_timeout: Duration::from_secs(60),
        ..RefereeConfig::default()
    })
    .await;
    let mut silent = Vec::new();
    for _ in 0..20 {
        silent.push(Client::open(addr).await);
    }
    // A fresh pair is seated and plays at once.
    let (mut black, mut white) = tokio::time::timeout(PATIENCE, game(addr))
        .await
        .expect("a fresh pair is seated despite the silent crowd");
    play(&mut black, &mut white, FIVE).await;
    black.send(&[3, 0, p("l8")]).await;
    black.expect([4, 1, p("l8")]).await;
    white.expect([4, 0, p("l8")]).await;
    // The oldest silent ones were dropped to make room.
    silent[0].expect_closed().await;
}

#[tokio::test]
async fn the_record_is_on_disk_when_end_arrives() {
    let dir = std::env::temp_dir().join(format!("omok-durable-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let addr = serve(RefereeConfig {
        tables: 3,
        record_dir: Some(dir.clone()),
        ..RefereeConfig::default()
    })
    .await;
    let mut pairs = Vec::new();
    for _ in 0..3 {
        let (mut black, mut white) = game(addr).await;
        play(&mut black, &mut white, FIVE).await;
        pairs.push((black, white));
    }
    // Three games end together.
    for (black, _) in &mut pairs {
        black.send(&[3, 0, p("l8")]).await;
    }
    for (black, _) in &mut pairs {
        black.expect([4, 1, p("l8")]).await;
    }
    let text = std::fs::read_to_string(dir.join("games.jsonl")).unwrap();
    let games = GameRecord::from_jsonl(&text).unwrap();
    assert_eq!(games.len(), 3, "every game ended is recorded before End");
    // Best effort: the SGF files are written after End on their own thread
    // and may still be appearing while this runs (not what is tested here).
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn shutdown_ends_games_records_them_and_returns() {
    let dir = std::env::temp_dir().join(format!("omok-shutdown-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let referee = Referee::bind(
        "127.0.0.1:0".parse().unwrap(),
        RefereeConfig {
            tables: 2,
            record_dir: Some(dir.clone()),
            ..RefereeConfig::default()
        },
    )
    .await
    .unwrap();
    let addr = referee.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(referee.run_until(async {
        let _ = stopped.await;
    }));
    let (mut black, mut white) = game(addr).await;
    play(&mut black, &mut white, "h8 a1").await;
    let mut waiting = Client::seated(addr, 0).await;
    stop.send(()).unwrap();
    black.expect([4, 2, p("a1")]).await;
    white.expect([4, 2, p("a1")]).await;
    black.expect_closed().await;
    waiting.expect_closed().await;
    tokio::time::timeout(PATIENCE, run)
        .await
        .expect("run_until returns after shutdown")
        .unwrap()
        .unwrap();
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "no longer accepting"
    );
    let text = std::fs::read_to_string(dir.join("games.jsonl")).unwrap();
    let games = GameRecord::from_jsonl(&text).unwrap();
    assert_eq!(games.len(), 1);
    assert_eq!(
        (games[0].winner, games[0].reason, games[0].moves.len()),
        (None, EndReason::Shutdown, 2)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
