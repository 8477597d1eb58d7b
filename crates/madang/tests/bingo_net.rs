//! Bingo over real loopback TCP: the paper's figures, every protocol
//! violation, `verify` catching cheats, and `resume` after a cut connection.

use std::time::Duration;

use bingo::frame::FrameError;
use bingo::message::{Answer, ParseError};
use bingo::session::{CardChoice, Limits};
use bingo::verify::{Cheat, commitment};
use bingo::{
    Board, Card, Ending, Extensions, Flag, GameEvent, GameResult, Role, Settings, Side,
    Verification, Violation,
};
use bingo_net::{Chooser, Controller, HostOptions, Update, Updates, UserInput};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::timeout;

/// Every test step must finish well within this; nothing may hang.
const LIMIT: Duration = Duration::from_secs(10);

/// Calls numbers in a fixed order.
struct Script(Vec<u16>);

impl Chooser for Script {
    fn choose(&mut self, board: &Board) -> Option<u16> {
        self.0.iter().copied().find(|&k| !board.is_number_marked(k))
    }
}

fn script(order: &[u16]) -> Controller {
    Controller::Chooser(Box::new(Script(order.to_vec())))
}

fn card(text: &str) -> CardChoice {
    CardChoice::Given(Card::parse(text).unwrap())
}

fn options(
    settings: Settings,
    card: CardChoice,
    extensions: Extensions,
    limits: Limits,
) -> HostOptions {
    HostOptions {
        settings,
        card,
        extensions,
        limits,
        games: 1,
    }
}

/// A bounded channel of updates and a task that keeps every one.
fn collector() -> (Updates, tokio::task::JoinHandle<Vec<Update>>) {
    let (updates, mut rx) = Updates::channel(64);
    let task = tokio::spawn(async move {
        let mut all = Vec::new();
        while let Some(update) = rx.recv().await {
            all.push(update);
        }
        all
    });
    (updates, task)
}

/// A host on a loopback port serving one game; returns its address, its
/// updates and how the game ended.
async fn spawn_host(
    options: HostOptions,
    mut controller: Controller,
) -> (String, tokio::task::JoinHandle<(Ending, Vec<Update>)>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let handle = tokio::spawn(async move {
        let (mut updates, collected) = collector();
        let endings = bingo_net::serve(&listener, &options, &mut controller, &mut updates)
            .await
            .unwrap();
        drop(updates);
        (
            endings.into_iter().next().unwrap(),
            collected.await.unwrap(),
        )
    });
    (addr, handle)
}

async fn join(
    addr: &str,
    card: CardChoice,
    extensions: Extensions,
    mut controller: Controller,
) -> (Ending, Vec<Update>) {
    let (mut updates, collected) = collector();
    let ending = bingo_net::join(
        addr,
        card,
        extensions,
        Limits::default(),
        &mut controller,
        &mut updates,
    )
    .await;
    drop(updates);
    (ending, collected.await.unwrap())
}

/// The calls as one side saw them: (caller, number, flag).
fn calls(updates: &[Update]) -> Vec<(Side, u16, Flag)> {
    updates
        .iter()
        .filter_map(|update| match update {
            Update::Game(GameEvent::Called {
                by, number, flag, ..
            }) => Some((*by, *number, *flag)),
            _ => None,
        })
        .collect()
}

fn result(ending: &Ending) -> (GameResult, u16, &Verification) {
    match ending {
        Ending::Result {
            outcome,
            verification,
        } => (outcome.result, outcome.number, verification),
        other => panic!("no result: {other:?}"),
    }
}

const ROWS: &str = "1 2 3\n4 5 6\n7 8 9";
/// Its first row is 1 2 4; it completes no line of `ROWS` early.
const OTHER: &str = "1 2 4\n3 5 6\n7 8 9";

/// Plays a scripted game over TCP and returns both endings and the calls the
/// host saw.
async fn scripted(
    settings: Settings,
    host_card: &str,
    guest_card: &str,
    host_order: &[u16],
    guest_order: &[u16],
) -> (Ending, Ending, Vec<(Side, u16, Flag)>) {
    let opts = options(
        settings,
        card(host_card),
        Extensions::ALL,
        Limits::default(),
    );
    let (addr, host) = spawn_host(opts, script(host_order)).await;
    let (guest_ending, _) = timeout(
        LIMIT,
        join(
            &addr,
            card(guest_card),
            Extensions::ALL,
            script(guest_order),
        ),
    )
    .await
    .unwrap();
    let (host_ending, host_updates) = timeout(LIMIT, host).await.unwrap().unwrap();
    (host_ending, guest_ending, calls(&host_updates))
}

#[tokio::test]
async fn figure_5_the_guest_wins_on_the_hosts_call() {
    let settings = Settings::new(3, 1, Role::Host).unwrap();
    let (host, guest, calls) = scripted(settings, ROWS, OTHER, &[1, 4, 9], &[2, 8]).await;
    assert_eq!(
        calls,
        [
            (Side::Me, 1, Flag::Call),
            (Side::Peer, 2, Flag::Call),
            (Side::Me, 4, Flag::Call)
        ]
    );
    assert_eq!(
        result(&host),
        (GameResult::Loss, 4, &Verification::Verified)
    );
    assert_eq!(
        result(&guest),
        (GameResult::Win, 4, &Verification::Verified)
    );
}

#[tokio::test]
async fn figure_6_the_host_wins_with_final_and_yield() {
    let settings = Settings::new(3, 1, Role::Host).unwrap();
    let (host, guest, calls) = scripted(settings, ROWS, OTHER, &[1, 2, 3], &[9, 8]).await;
    assert_eq!(calls.last(), Some(&(Side::Me, 3, Flag::Final)));
    assert_eq!(calls.len(), 5, "CALL passes the turn until then: {calls:?}");
    assert_eq!(result(&host), (GameResult::Win, 3, &Verification::Verified));
    assert_eq!(
        result(&guest),
        (GameResult::Loss, 3, &Verification::Verified)
    );
}

#[tokio::test]
async fn figure_7_a_draw_on_one_call() {
    let settings = Settings::new(3, 1, Role::Guest).unwrap();
    let (host, guest, calls) = scripted(settings, ROWS, ROWS, &[4, 5], &[1, 2, 3]).await;
    assert_eq!(calls.last(), Some(&(Side::Peer, 3, Flag::Final)));
    assert_eq!(
        result(&host),
        (GameResult::Draw, 3, &Verification::Verified)
    );
    assert_eq!(
        result(&guest),
        (GameResult::Draw, 3, &Verification::Verified)
    );
}

#[tokio::test]
async fn a_plain_call_passes_the_turn() {
    let settings = Settings::new(5, 12, Role::Host).unwrap();
    let order: Vec<u16> = (1..=25).collect();
    let rows = "1 2 3 4 5\n6 7 8 9 10\n11 12 13 14 15\n16 17 18 19 20\n21 22 23 24 25";
    let (host, guest, calls) = scripted(settings, rows, rows, &order, &order).await;
    // Twelve lines need the whole card: every call but the last is a CALL
    // and the turn alternates.
    assert_eq!(calls.len(), 25);
    for (i, (by, number, flag)) in calls.iter().enumerate() {
        assert_eq!(*by, if i % 2 == 0 { Side::Me } else { Side::Peer });
        assert_eq!(usize::from(*number), i + 1);
        assert_eq!(*flag, if i == 24 { Flag::Final } else { Flag::Call });
    }
    assert_eq!(result(&host).0, GameResult::Draw);
    assert_eq!(result(&guest).0, GameResult::Draw);
}

/// A hand-driven peer: the test writes exact bytes and reads exact lines.
struct RawPeer {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
}

impl RawPeer {
    async fn connect(addr: &str) -> RawPeer {
        let (read, writer) = TcpStream::connect(addr).await.unwrap().into_split();
        RawPeer {
            reader: BufReader::new(read),
            writer,
        }
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.unwrap();
    }

    async fn line(&mut self) -> String {
        let mut line = String::new();
        timeout(LIMIT, self.reader.read_line(&mut line))
            .await
            .unwrap()
            .unwrap();
        assert!(line.ends_with('\n'), "a whole line, got {line:?}");
        line.trim_end().to_owned()
    }

    /// Reads lines until one starts with `prefix`.
    async fn until(&mut self, prefix: &str) -> String {
        loop {
            let line = self.line().await;
            if line.starts_with(prefix) {
                return line;
            }
        }
    }

    /// The other side closes: end of stream, with no more lines. Then this
    /// side closes too.
    async fn expect_close(mut self) {
        let mut rest = Vec::new();
        timeout(LIMIT, self.reader.read_to_end(&mut rest))
            .await
            .unwrap()
            .unwrap();
        assert!(
            rest.is_empty(),
            "nothing after ERROR: {:?}",
            String::from_utf8_lossy(&rest)
        );
    }
}

/// A host that never calls by itself (a person who does nothing), so the
/// raw peer controls the game.
fn idle_person() -> (Controller, mpsc::UnboundedSender<UserInput>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Controller::Person(rx), tx)
}

/// Connects a raw guest to a fresh host, greets it, sends `bytes`, and
/// checks that the host answers `ERROR` with the violation's text, closes,
/// and ends its game with that violation.
async fn violation(first: Role, limits: Limits, greet: &str, bytes: &[u8], expected: Violation) {
    let settings = Settings::new(5, 5, first).unwrap();
    let rows = "1 2 3 4 5\n6 7 8 9 10\n11 12 13 14 15\n16 17 18 19 20\n21 22 23 24 25";
    let (person, _keep) = idle_person();
    let (addr, host) = spawn_host(
        options(settings, card(rows), Extensions::default(), limits),
        person,
    )
    .await;
    let mut peer = RawPeer::connect(&addr).await;
    let hello = peer.line().await;
    assert_eq!(hello, format!("HELLO bingo/1 {settings}"));
    peer.send(greet.as_bytes()).await;
    peer.send(bytes).await;
    let error = peer.until("ERROR").await;
    assert_eq!(error, format!("ERROR {expected}"));
    peer.expect_close().await;
    let (ending, _) = timeout(LIMIT, host).await.unwrap().unwrap();
    assert_eq!(ending, Ending::Violation(expected));
}

fn parse(error: ParseError) -> Violation {
    Violation::Parse(error)
}

const GREET: &str = "HELLO bingo/1\n";

#[tokio::test]
async fn out_of_range_number() {
    violation(
        Role::Guest,
        Limits::default(),
        GREET,
        b"CALL 26\n",
        Violation::OutOfRange {
            number: 26,
            max: 25,
        },
    )
    .await;
    violation(
        Role::Guest,
        Limits::default(),
        GREET,
        b"CALL 0\n",
        Violation::OutOfRange { number: 0, max: 25 },
    )
    .await;
    violation(
        Role::Guest,
        Limits::default(),
        GREET,
        b"CALL 70000\n",
        parse(ParseError::NumberTooLarge("70000".into())),
    )
    .await;
}

#[tokio::test]
async fn repeated_number() {
    let settings = Settings::new(5, 5, Role::Guest).unwrap();
    let opts = options(
        settings,
        CardChoice::Shuffled(1),
        Extensions::default(),
        Limits::default(),
    );
    let (addr, host) = spawn_host(opts, script(&[2, 3, 4])).await;
    let mut peer = RawPeer::connect(&addr).await;
    peer.line().await;
    peer.send(b"HELLO bingo/1\nCALL 1\n").await;
    assert_eq!(peer.line().await, "CALL 2");
    peer.send(b"CALL 1\n").await;
    assert_eq!(peer.line().await, "ERROR number 1 was already called");
    peer.expect_close().await;
    let (ending, _) = host.await.unwrap();
    assert_eq!(ending, Ending::Violation(Violation::AlreadyCalled(1)));
}

#[tokio::test]
async fn malformed_numbers() {
    let cases = [
        ("CALL 05\n", ParseError::BadNumber("05".into())),
        ("CALL +5\n", ParseError::BadNumber("+5".into())),
        ("CALL five\n", ParseError::BadNumber("five".into())),
        (
            "CALL\n",
            ParseError::MissingField {
                keyword: "CALL",
                field: "a number",
            },
        ),
        ("CALL  5\n", ParseError::Spacing),
        ("FINAL 5 6\n", ParseError::ExtraField("FINAL")),
    ];
    for (line, error) in cases {
        violation(
            Role::Guest,
            Limits::default(),
            GREET,
            line.as_bytes(),
            parse(error),
        )
        .await;
    }
}

#[tokio::test]
async fn call_out_of_turn() {
    violation(
        Role::Host,
        Limits::default(),
        GREET,
        b"CALL 5\n",
        Violation::MyTurn {
            flag: Flag::Call,
            number: 5,
        },
    )
    .await;
    violation(
        Role::Host,
        Limits::default(),
        GREET,
        b"FINAL 5\n",
        Violation::MyTurn {
            flag: Flag::Final,
            number: 5,
        },
    )
    .await;
}

#[tokio::test]
async fn answer_with_nothing_to_answer() {
    for answer in [Answer::Bingo, Answer::Yield, Answer::Tie] {
        let line = format!("{}\n", answer.keyword());
        violation(
            Role::Guest,
            Limits::default(),
            GREET,
            line.as_bytes(),
            Violation::NothingToAnswer(answer),
        )
        .await;
    }
}

#[tokio::test]
async fn yield_does_not_answer_call() {
    let settings = Settings::new(5, 5, Role::Host).unwrap();
    let opts = options(
        settings,
        CardChoice::Shuffled(1),
        Extensions::default(),
        Limits::default(),
    );
    let (addr, host) = spawn_host(opts, script(&[7])).await;
    let mut peer = RawPeer::connect(&addr).await;
    peer.line().await;
    peer.send(GREET.as_bytes()).await;
    assert_eq!(peer.line().await, "CALL 7");
    peer.send(b"YIELD\n").await;
    let expected = Violation::VerdictToCall {
        answer: Answer::Yield,
        call: 7,
    };
    assert_eq!(peer.line().await, format!("ERROR {expected}"));
    peer.expect_close().await;
    assert!(matches!(
        host.await.unwrap().0,
        Ending::Violation(Violation::VerdictToCall { .. })
    ));
}

#[tokio::test]
async fn unknown_keyword() {
    violation(
        Role::Guest,
        Limits::default(),
        GREET,
        b"PASS\n",
        parse(ParseError::UnknownKeyword("PASS".into())),
    )
    .await;
    violation(
        Role::Guest,
        Limits::default(),
        GREET,
        b"call 5\n",
        parse(ParseError::UnknownKeyword("call".into())),
    )
    .await;
}

#[tokio::test]
async fn over_long_lines() {
    let mut with_end = b"CHAT ".to_vec();
    with_end.extend([b'x'; 1100]);
    with_end.push(b'\n');
    violation(
        Role::Guest,
        Limits::default(),
        GREET,
        &with_end,
        Violation::Frame(FrameError::TooLong),
    )
    .await;
    // No line end at all: the host must not wait for one.
    violation(
        Role::Guest,
        Limits::default(),
        GREET,
        &[b'x'; 1025],
        Violation::Frame(FrameError::TooLong),
    )
    .await;
}

#[tokio::test]
async fn a_line_of_exactly_1024_bytes_is_fine() {
    let settings = Settings::new(5, 5, Role::Guest).unwrap();
    let (person, _keep) = idle_person();
    let opts = options(
        settings,
        CardChoice::Shuffled(1),
        Extensions::default(),
        Limits::default(),
    );
    let (addr, host) = spawn_host(opts, person).await;
    let mut peer = RawPeer::connect(&addr).await;
    peer.line().await;
    let mut chat = b"CHAT ".to_vec();
    chat.extend([b'x'; 1019]);
    chat.extend(b"\r\nPASS\n");
    peer.send(GREET.as_bytes()).await;
    peer.send(&chat).await;
    assert_eq!(peer.line().await, "ERROR unknown keyword \"PASS\"");
    peer.expect_close().await;
    let (_, updates) = host.await.unwrap();
    assert!(
        updates
            .iter()
            .any(|u| matches!(u, Update::Game(GameEvent::Chat { text, .. }) if text.len() == 1019))
    );
}

#[tokio::test]
async fn invalid_utf8() {
    violation(
        Role::Guest,
        Limits::default(),
        GREET,
        b"CHAT \xff\xfe\n",
        Violation::Frame(FrameError::InvalidUtf8),
    )
    .await;
}

#[tokio::test]
async fn wrong_version() {
    violation(
        Role::Guest,
        Limits::default(),
        "HELLO bingo/2\n",
        b"",
        parse(ParseError::BadVersion("bingo/2".into())),
    )
    .await;
    violation(
        Role::Guest,
        Limits::default(),
        "CALL 1\n",
        b"",
        Violation::ExpectedHello("CALL"),
    )
    .await;
}

#[tokio::test]
async fn silence_past_the_idle_limit() {
    let limits = Limits {
        hello: Duration::from_millis(300),
        idle: Duration::from_millis(300),
        ..Limits::default()
    };
    // Silent after HELLO, and silent from the start.
    let silence = Violation::Silence(Duration::from_millis(300));
    assert_eq!(silence.to_string(), "no message for 0.3 s");
    violation(Role::Guest, limits, GREET, b"", silence.clone()).await;
    violation(Role::Guest, limits, "", b"", silence).await;
}

#[tokio::test]
async fn chat_does_not_stretch_the_hello_limit() {
    let limits = Limits {
        hello: Duration::from_millis(300),
        ..Limits::default()
    };
    let settings = Settings::new(5, 5, Role::Guest).unwrap();
    let rows = "1 2 3 4 5\n6 7 8 9 10\n11 12 13 14 15\n16 17 18 19 20\n21 22 23 24 25";
    let (person, _keep) = idle_person();
    let (addr, host) = spawn_host(
        options(settings, card(rows), Extensions::default(), limits),
        person,
    )
    .await;
    let RawPeer { reader, mut writer } = RawPeer::connect(&addr).await;
    // A peer that chats every 100 ms, well within the limit, and never
    // says HELLO.
    let chatter = tokio::spawn(async move {
        for _ in 0..50 {
            if writer.write_all(b"CHAT still here\n").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let mut lines = reader.lines();
    let error = timeout(LIMIT, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.starts_with("ERROR") {
                return line;
            }
        }
        panic!("closed without ERROR");
    })
    .await
    .expect("the HELLO limit holds despite the chat");
    assert_eq!(error, "ERROR no message for 0.3 s");
    let (ending, _) = timeout(LIMIT, host).await.unwrap().unwrap();
    assert!(
        matches!(ending, Ending::Violation(Violation::Silence(_))),
        "{ending:?}"
    );
    chatter.abort();
}

#[tokio::test]
async fn an_error_from_the_peer_ends_the_game() {
    let settings = Settings::new(5, 5, Role::Guest).unwrap();
    let (person, _keep) = idle_person();
    let opts = options(
        settings,
        CardChoice::Shuffled(1),
        Extensions::default(),
        Limits::default(),
    );
    let (addr, host) = spawn_host(opts, person).await;
    let mut peer = RawPeer::connect(&addr).await;
    peer.line().await;
    peer.send(b"HELLO bingo/1\nERROR I give up\n").await;
    peer.expect_close().await;
    let (ending, _) = host.await.unwrap();
    assert_eq!(ending, Ending::PeerError("I give up".into()));
}

/// A raw guest with `verify` on a 2x2 card, target 1: every pair of numbers
/// is a line, so the second call always gives both sides bingo.
async fn verify_game(commit_to: &str, steps: &[&str], reveal: &str) -> Ending {
    let settings = Settings::new(2, 1, Role::Guest).unwrap();
    let opts = options(
        settings,
        card("1 2\n3 4"),
        Extensions::ALL,
        Limits::default(),
    );
    let (addr, host) = spawn_host(opts, script(&[2, 3, 4])).await;
    let mut peer = RawPeer::connect(&addr).await;
    assert!(peer.line().await.ends_with("verify resume"));
    let salt = "5a".repeat(16);
    let commit = commitment(&salt, commit_to);
    peer.send(format!("HELLO bingo/1 verify\nCOMMIT {commit}\n").as_bytes())
        .await;
    assert!(peer.line().await.starts_with("COMMIT "));
    for step in steps {
        if let Some(expected) = step.strip_prefix("< ") {
            assert_eq!(peer.line().await, *expected);
        } else {
            peer.send(format!("{step}\n").as_bytes()).await;
        }
    }
    peer.until("REVEAL").await;
    peer.send(format!("REVEAL {salt} {reveal}\n").as_bytes())
        .await;
    peer.expect_close().await;
    timeout(LIMIT, host).await.unwrap().unwrap().0
}

#[tokio::test]
async fn verify_accepts_an_honest_peer() {
    let ending = verify_game("4,3,2,1", &["CALL 1", "< FINAL 2", "TIE"], "4,3,2,1").await;
    assert_eq!(
        result(&ending),
        (GameResult::Draw, 2, &Verification::Verified)
    );
}

#[tokio::test]
async fn verify_catches_flags_that_contradict_the_card() {
    // One number completes no line, so FINAL 1 is a lie.
    let ending = verify_game("4,3,2,1", &["FINAL 1", "< YIELD"], "4,3,2,1").await;
    let (outcome, _, verification) = result(&ending);
    assert_eq!(outcome, GameResult::Loss, "the flags decide the result");
    assert!(
        matches!(
            verification,
            Verification::Cheated(Cheat::WrongFlag {
                number: 1,
                sent: Flag::Final,
                expected: Flag::Call
            })
        ),
        "{verification:?}"
    );
}

#[tokio::test]
async fn verify_catches_a_card_that_does_not_match_its_commitment() {
    let ending = verify_game("4,3,2,1", &["CALL 1", "< FINAL 2", "TIE"], "1,2,3,4").await;
    let (_, _, verification) = result(&ending);
    assert!(
        matches!(verification, Verification::Cheated(Cheat::Commitment)),
        "{verification:?}"
    );
}

/// Forwards connections to `target`; the first one is cut after `cut_after`
/// lines have gone from the host to the guest.
async fn cutting_proxy(target: String, cut_after: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let mut first = true;
        loop {
            let Ok((guest, _)) = listener.accept().await else {
                return;
            };
            let host = TcpStream::connect(&target).await.unwrap();
            let (guest_read, mut guest_write) = guest.into_split();
            let (host_read, mut host_write) = host.into_split();
            let upstream = tokio::spawn(async move {
                let mut guest_read = guest_read;
                let _ = tokio::io::copy(&mut guest_read, &mut host_write).await;
                let _ = host_write.shutdown().await;
            });
            let limit = if first { Some(cut_after) } else { None };
            first = false;
            tokio::spawn(async move {
                let mut lines = BufReader::new(host_read);
                let mut forwarded = 0;
                loop {
                    let mut line = Vec::new();
                    match lines.read_until(b'\n', &mut line).await {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                    if guest_write.write_all(&line).await.is_err() {
                        break;
                    }
                    forwarded += 1;
                    if Some(forwarded) == limit {
                        // Cut: both sockets go away at once.
                        upstream.abort();
                        return;
                    }
                }
                let _ = guest_write.shutdown().await;
            });
        }
    });
    addr
}

async fn auto_game(
    cut_after: Option<usize>,
) -> (
    Ending,
    Ending,
    Vec<(Side, u16, Flag)>,
    Vec<(Side, u16, Flag)>,
) {
    let settings = Settings::new(5, 5, Role::Host).unwrap();
    let opts = options(
        settings,
        CardChoice::Shuffled(11),
        Extensions::ALL,
        Limits::default(),
    );
    let (addr, host) = spawn_host(opts, Controller::auto(1)).await;
    let addr = match cut_after {
        Some(n) => cutting_proxy(addr, n).await,
        None => addr,
    };
    let (guest_ending, guest_updates) = timeout(
        LIMIT,
        join(
            &addr,
            CardChoice::Shuffled(22),
            Extensions::ALL,
            Controller::auto(2),
        ),
    )
    .await
    .unwrap();
    let (host_ending, host_updates) = timeout(LIMIT, host).await.unwrap().unwrap();
    if cut_after.is_some() {
        assert!(host_updates.contains(&Update::Game(GameEvent::Resumed)));
        assert!(guest_updates.contains(&Update::Game(GameEvent::Reconnecting)));
    }
    (
        host_ending,
        guest_ending,
        calls(&host_updates),
        calls(&guest_updates),
    )
}

#[tokio::test]
async fn resume_after_a_cut_gives_the_same_game() {
    let (host, guest, host_calls, guest_calls) = auto_game(None).await;
    assert!(host_calls.len() > 8, "long enough to cut: {host_calls:?}");
    let mirror = |calls: &[(Side, u16, Flag)]| -> Vec<(Side, u16, Flag)> {
        calls
            .iter()
            .map(|&(by, k, f)| (if by == Side::Me { Side::Peer } else { Side::Me }, k, f))
            .collect()
    };
    assert_eq!(mirror(&host_calls), guest_calls);
    // The host sends HELLO, COMMIT, its calls, its answer if the guest
    // called last, and REVEAL.
    let host_lines = 3
        + host_calls
            .iter()
            .filter(|(by, _, _)| *by == Side::Me)
            .count()
        + usize::from(host_calls.last().unwrap().0 == Side::Peer);
    // Cut early, mid-game, and just before the host's REVEAL, so that the
    // last flag or the REVEALs are lost and must be sent again.
    for cut in [3, 4, 5, 7, host_lines - 1] {
        let (cut_host, cut_guest, cut_host_calls, cut_guest_calls) = auto_game(Some(cut)).await;
        assert_eq!(cut_host_calls, host_calls, "cut after {cut} lines");
        assert_eq!(cut_guest_calls, guest_calls, "cut after {cut} lines");
        assert_eq!(cut_host, host);
        assert_eq!(cut_guest, guest);
    }
}

#[tokio::test]
async fn a_connection_that_leaves_before_hello_is_not_a_game() {
    let settings = Settings::new(3, 1, Role::Host).unwrap();
    let opts = options(settings, card(ROWS), Extensions::ALL, Limits::default());
    let (addr, host) = spawn_host(opts, script(&[1, 4, 9])).await;
    // A probe: connect, read the HELLO, leave.
    let mut probe = RawPeer::connect(&addr).await;
    assert!(probe.line().await.starts_with("HELLO bingo/1"));
    drop(probe);
    let (guest, _) = timeout(
        LIMIT,
        join(&addr, card(OTHER), Extensions::ALL, script(&[2, 8])),
    )
    .await
    .unwrap();
    let (host, _) = timeout(LIMIT, host).await.unwrap().unwrap();
    assert_eq!(result(&host).0, GameResult::Loss);
    assert_eq!(result(&guest).0, GameResult::Win);
}

/// A guest (a person who does nothing, no extensions) joined to a
/// hand-driven host: the guest's game, the host's end of the connection,
/// and the person's input to keep.
async fn guest_of_a_raw_host() -> (
    tokio::task::JoinHandle<(Ending, Vec<Update>)>,
    RawPeer,
    mpsc::UnboundedSender<UserInput>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (person, keep) = idle_person();
    let guest = tokio::spawn(async move {
        join(
            &addr,
            CardChoice::Shuffled(1),
            Extensions::default(),
            person,
        )
        .await
    });
    let (stream, _) = listener.accept().await.unwrap();
    let (read, writer) = stream.into_split();
    let host = RawPeer {
        reader: BufReader::new(read),
        writer,
    };
    (guest, host, keep)
}

/// A hand-driven host: accepts one guest, sends `script` lines, and checks
/// that the guest answers `ERROR` with `reason` and ends its game with it.
async fn guest_sees_violation(script_lines: &[&str], expected: Violation) {
    let (guest, mut host, _keep) = guest_of_a_raw_host().await;
    for line in script_lines {
        if let Some(expected) = line.strip_prefix("< ") {
            assert_eq!(host.line().await, expected);
        } else {
            host.send(format!("{line}\n").as_bytes()).await;
        }
    }
    let error = host.until("ERROR").await;
    assert_eq!(error, format!("ERROR {expected}"));
    host.expect_close().await;
    let (ending, _) = timeout(LIMIT, guest).await.unwrap().unwrap();
    assert_eq!(ending, Ending::Violation(expected));
}

#[tokio::test]
async fn the_guest_refuses_a_bad_host() {
    let hello = "HELLO bingo/1 size=3 lines=2 first=host";
    let bad_lines = bingo::SettingsError::BadLines {
        lines: 9,
        size: 3,
        max: 8,
    };
    guest_sees_violation(
        &["HELLO bingo/1 size=3 lines=9 first=host"],
        parse(ParseError::Settings(bad_lines)),
    )
    .await;
    guest_sees_violation(
        &["HELLO bingo/1 lines=2 first=host"],
        parse(ParseError::MissingSetting("size")),
    )
    .await;
    guest_sees_violation(&["HELLO bingo/1"], Violation::NoSettings).await;
    guest_sees_violation(
        &[hello, "< HELLO bingo/1", "CALL 10"],
        Violation::OutOfRange { number: 10, max: 9 },
    )
    .await;
    guest_sees_violation(
        &[hello, "< HELLO bingo/1", "TIE"],
        Violation::NothingToAnswer(Answer::Tie),
    )
    .await;
    guest_sees_violation(
        &[hello, "< HELLO bingo/1", "CALL 1", "CALL 2"],
        Violation::MyTurn {
            flag: Flag::Call,
            number: 2,
        },
    )
    .await;
}

/// A raw guest that joins with `resume` (no verify) and the given key;
/// returns it and the game id from the host's HELLO.
async fn raw_guest_with_resume(addr: &str, key: &str) -> (RawPeer, String) {
    let mut peer = RawPeer::connect(addr).await;
    let hello = peer.line().await;
    let id = hello
        .split(' ')
        .find_map(|field| field.strip_prefix("id="))
        .unwrap_or_else(|| panic!("no id in {hello}"))
        .to_owned();
    peer.send(format!("HELLO bingo/1 key={key} resume\n").as_bytes())
        .await;
    (peer, id)
}

#[tokio::test]
async fn strangers_and_squatters_do_not_keep_the_guest_from_its_game() {
    let settings = Settings::new(5, 5, Role::Host).unwrap();
    let limits = Limits {
        resume_grace: Duration::from_secs(20),
        ..Limits::default()
    };
    let extensions = Extensions {
        verify: false,
        resume: true,
    };
    let opts = options(settings, CardChoice::Shuffled(3), extensions, limits);
    let (addr, host) = spawn_host(opts, script(&[7, 8, 9])).await;
    let key = "5a".repeat(16);
    let (mut guest, id) = raw_guest_with_resume(&addr, &key).await;
    assert_eq!(guest.line().await, "CALL 7");
    drop(guest);
    // A connection that says nothing, opened right after the drop.
    let mut squatter = RawPeer::connect(&addr).await;
    assert_eq!(squatter.line().await, "HELLO bingo/1 resume");
    // A stranger who knows the id but not the key.
    let mut stranger = RawPeer::connect(&addr).await;
    assert_eq!(stranger.line().await, "HELLO bingo/1 resume");
    let wrong = "a5".repeat(16);
    stranger
        .send(format!("RESUME {id} 1 {wrong}\n").as_bytes())
        .await;
    assert_eq!(
        stranger.line().await,
        format!("ERROR {}", Violation::NoSuchGame)
    );
    stranger.expect_close().await;
    // The real guest, while the squatter still sits there.
    let mut guest = RawPeer::connect(&addr).await;
    assert_eq!(guest.line().await, "HELLO bingo/1 resume");
    guest
        .send(format!("RESUME {id} 1 {key}\n").as_bytes())
        .await;
    assert_eq!(guest.line().await, format!("RESUME {id} 1"));
    guest.send(b"ERROR bye\n").await;
    guest.expect_close().await;
    squatter.expect_close().await;
    let (ending, updates) = timeout(LIMIT, host).await.unwrap().unwrap();
    assert_eq!(ending, Ending::PeerError("bye".into()));
    let connected = updates
        .iter()
        .filter(|update| matches!(update, Update::Connected(_)))
        .count();
    assert_eq!(
        connected, 2,
        "joined, then resumed; nobody else: {updates:?}"
    );
    assert!(updates.contains(&Update::Game(GameEvent::Resumed)));
}

#[tokio::test]
async fn two_hundred_megabytes_of_chat_cost_no_memory() {
    const LINES: usize = 200_000;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    // The display never reads while the flood lasts.
    let (mut updates, mut display) = Updates::channel(64);
    let (person, _keep) = idle_person();
    let guest = tokio::spawn(async move {
        let mut person = person;
        bingo_net::join(
            &addr,
            CardChoice::Shuffled(1),
            Extensions::default(),
            Limits::default(),
            &mut person,
            &mut updates,
        )
        .await
    });
    let (stream, _) = listener.accept().await.unwrap();
    let (read, writer) = stream.into_split();
    let mut host = RawPeer {
        reader: BufReader::new(read),
        writer,
    };
    host.send(b"HELLO bingo/1 size=3 lines=1 first=guest\n")
        .await;
    assert_eq!(host.line().await, "HELLO bingo/1");
    let mut chat = b"CHAT ".to_vec();
    chat.extend([b'x'; 1019]);
    chat.push(b'\n');
    let block: Vec<u8> = chat.repeat(1000);
    timeout(Duration::from_secs(120), async {
        for _ in 0..LINES / 1000 {
            host.send(&block).await;
        }
    })
    .await
    .expect("the guest keeps reading while its display does not");
    host.send(b"ERROR done\n").await;
    let mut chats = 0;
    let mut dropped = 0;
    let mut ended = None;
    while let Some(update) = display.recv().await {
        match update {
            Update::Game(GameEvent::Chat { .. }) => chats += 1,
            Update::ChatDropped(count) => dropped += count,
            Update::Game(GameEvent::Ended(ending)) => ended = Some(ending),
            _ => {}
        }
    }
    // The display held at most its 64; what it saw beyond those came while
    // it read, from the lines still in the sockets' buffers.
    assert_eq!(chats + dropped, LINES, "every line shown or counted");
    assert!(dropped > LINES * 9 / 10, "{dropped} of {LINES} dropped");
    assert_eq!(
        ended,
        Some(Ending::PeerError("done".into())),
        "never a flag"
    );
    assert_eq!(guest.await.unwrap(), Ending::PeerError("done".into()));
}

#[tokio::test]
async fn a_peers_control_characters_never_reach_the_display() {
    let (guest, mut host, _keep) = guest_of_a_raw_host().await;
    host.send(b"HELLO bingo/1 size=3 lines=1 first=guest\n")
        .await;
    host.line().await;
    host.send(b"CHAT \x1b]0;owned\x07\x1b[2J\rresult: win\xc2\x9b\n")
        .await;
    host.send(b"ERROR \x1b[1Aresult: win\n").await;
    host.expect_close().await;
    let (ending, updates) = timeout(LIMIT, guest).await.unwrap().unwrap();
    let chat = updates
        .iter()
        .find_map(|update| match update {
            Update::Game(GameEvent::Chat { text, .. }) => Some(text.clone()),
            _ => None,
        })
        .unwrap();
    assert!(!chat.chars().any(char::is_control), "{chat:?}");
    assert!(chat.ends_with("result: win\u{fffd}"), "{chat:?}");
    let Ending::PeerError(reason) = ending else {
        panic!("{ending:?}")
    };
    assert_eq!(reason, "\u{fffd}[1Aresult: win");
}
