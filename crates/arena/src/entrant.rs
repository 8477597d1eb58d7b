//! Entrants and their drivers: the built-in engine on a thread of its own,
//! or a Gomocup engine process. A driver turns "your move in this
//! position" into whatever its engine understands, and everything the
//! engine does into [`Report`]s on the game's one channel, each stamped
//! with the instant it happened.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::mpsc::{Sender, channel};
use std::time::{Duration, Instant};

use engine::{Engine, EngineConfig};
use gomocup::driver::{
    END_GRACE, EngineCommand, EngineProcess, Output, ProcessTree, position_lines,
};
use omok::frame::{FRAME_LEN, PlayerMsg, RefereeMsg};
use renju::{Color, Game, Point, Rule};
use serde::{Deserialize, Serialize};

use crate::clock::{Clock, TimeControl};

/// A player of a tournament: a name, how to run it, and its time control.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entrant {
    /// The name in tables and records (unique in a tournament).
    pub name: String,
    /// How to run it.
    pub kind: EntrantKind,
    /// Its time control.
    pub time: TimeControl,
}

/// How an entrant is run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum EntrantKind {
    /// The built-in engine, in-process.
    Builtin {
        /// Iteration limit.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        depth: Option<i32>,
        /// Node limit per move (with one thread: reproducible games).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nodes: Option<u64>,
        /// Search threads.
        #[serde(default = "one")]
        threads: usize,
        /// Hash table size in MiB.
        #[serde(default = "default_hash")]
        hash_mb: usize,
    },
    /// A Gomocup (Piskvork protocol) engine.
    Gomocup {
        /// The command line.
        command: String,
        /// Its working directory (default: the program's directory).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dir: Option<PathBuf>,
        /// `INFO key value` lines sent before each game.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        options: BTreeMap<String, String>,
    },
    /// A program written to the Omok document: the arena runs a 3-byte
    /// referee for each game and starts the program as its client.
    Client {
        /// The command line; `{host}` and `{port}` are replaced by the
        /// referee's address.
        command: String,
    },
}

fn one() -> usize {
    1
}

fn default_hash() -> usize {
    16
}

impl EntrantKind {
    /// Parses the command-line form: `builtin`, `builtin:depth=N,nodes=N,
    /// threads=N,hash=MB`, `client:COMMAND` (a 3-byte protocol client with
    /// `{host}` and `{port}` in its command line), or the command line of a
    /// Gomocup engine.
    pub fn parse(spec: &str) -> Result<EntrantKind, String> {
        if let Some(command) = spec.strip_prefix("client:") {
            if !command.contains("{port}") {
                return Err(format!("{command:?} has no {{port}} to connect to"));
            }
            return Ok(EntrantKind::Client {
                command: command.to_owned(),
            });
        }
        let Some(settings) = spec.strip_prefix("builtin") else {
            if spec.trim().is_empty() {
                return Err("empty engine command".into());
            }
            return Ok(EntrantKind::Gomocup {
                command: spec.to_owned(),
                dir: None,
                options: BTreeMap::new(),
            });
        };
        let (mut depth, mut nodes, mut threads, mut hash_mb) = (None, None, 1, default_hash());
        for kv in settings
            .strip_prefix(':')
            .unwrap_or(settings)
            .split(',')
            .filter(|s| !s.is_empty())
        {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("expected key=value, got {kv:?}"))?;
            let n: u64 = v.parse().map_err(|_| format!("not a number in {kv:?}"))?;
            match k {
                "depth" => depth = Some(n.clamp(1, 60) as i32),
                "nodes" => nodes = Some(n),
                "threads" => threads = (n as usize).clamp(1, 256),
                "hash" => hash_mb = (n as usize).clamp(1, 1 << 16),
                _ => {
                    return Err(format!(
                        "unknown setting {k:?} (depth, nodes, threads, hash)"
                    ));
                }
            }
        }
        Ok(EntrantKind::Builtin {
            depth,
            nodes,
            threads,
            hash_mb,
        })
    }
}

/// Why an engine lost by its own fault (besides its moves and its clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The process exited or closed its output (or the engine panicked).
    Crash,
    /// Unknown output, `ERROR`, `UNKNOWN`.
    Protocol,
    /// Its memory grew past the limit.
    Memory,
}

/// Something an engine did.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Answered `OK` (to `START`).
    Ok,
    /// Played a point.
    Move(Point),
    /// Played something that is not a point of the board.
    OffBoard(String),
    /// Reported an evaluation for the side to move (centi-stones, mate
    /// scores large).
    Eval(i32),
    /// Failed.
    Fault(Fault, String),
}

/// An [`Event`] from one seat, stamped with the instant it happened.
#[derive(Debug, Clone)]
pub struct Report {
    /// The seat it came from.
    pub seat: Color,
    /// When it happened.
    pub at: Instant,
    /// What happened.
    pub event: Event,
}

/// Settings of one game that drivers need.
#[derive(Debug, Clone)]
pub struct DriverSetup {
    /// The rule.
    pub rule: Rule,
    /// Stop the engine's process tree while it is not on move.
    pub pause_idle: bool,
    /// The core to pin the engine to.
    pub cpu: Option<usize>,
    /// Memory limit announced to the engine.
    pub max_memory: Option<u64>,
    /// How long a client program may take to connect.
    pub startup: Duration,
    /// Ignore output lines the protocol does not know.
    pub lenient_output: bool,
}

/// A running entrant.
pub enum Driver {
    /// The built-in engine's thread.
    Builtin(BuiltinDriver),
    /// A Gomocup engine process.
    Gomocup(GomocupDriver),
    /// A 3-byte protocol client process and its connection.
    Client(ClientDriver),
}

impl Driver {
    /// Starts `entrant` in `seat`; it reports [`Event::Ok`] when ready.
    pub fn start(
        entrant: &Entrant,
        seat: Color,
        setup: &DriverSetup,
        tx: Sender<Report>,
    ) -> Result<Driver, String> {
        match &entrant.kind {
            EntrantKind::Builtin {
                depth,
                nodes,
                threads,
                hash_mb,
            } => {
                let config = EngineConfig {
                    max_depth: *depth,
                    max_nodes: *nodes,
                    threads: *threads,
                    hash_bytes: hash_mb << 20,
                };
                Ok(Driver::Builtin(BuiltinDriver::start(
                    seat, setup.rule, config, tx,
                )))
            }
            EntrantKind::Gomocup {
                command,
                dir,
                options,
            } => {
                let command = EngineCommand {
                    line: command.clone(),
                    dir: dir.clone(),
                    cpu: setup.cpu,
                };
                GomocupDriver::start(seat, &command, options.clone(), setup, tx)
                    .map(Driver::Gomocup)
            }
            EntrantKind::Client { command } => {
                ClientDriver::start(seat, command, setup, tx).map(Driver::Client)
            }
        }
    }

    /// A frame the referee table sends to this seat: only a 3-byte client
    /// hears them; the other drivers are told the same through
    /// [`Driver::go`].
    pub fn deliver(&mut self, msg: RefereeMsg) {
        if let Driver::Client(c) = self {
            // A write that fails means the client is gone: its reader
            // reports that.
            let _ = c.socket.write_all(&msg.encode());
        }
    }

    /// Whether the engine hears the referee's frames (a 3-byte client).
    pub fn hears_frames(&self) -> bool {
        matches!(self, Driver::Client(_))
    }

    /// Sends the game's settings once the engine said `OK`.
    pub fn configure(&mut self, clock: &Clock, seat: Color) -> Result<(), String> {
        match self {
            Driver::Builtin(_) | Driver::Client(_) => Ok(()),
            Driver::Gomocup(g) => g.configure(clock.limits(seat)),
        }
    }

    /// Asks for a move in `game` with `budget` for it and `left` on the
    /// match clock.
    pub fn go(
        &mut self,
        game: &Game,
        budget: Duration,
        left: Option<Duration>,
    ) -> Result<(), String> {
        match self {
            Driver::Builtin(b) => b.go(game, budget),
            Driver::Gomocup(g) => g.go(game, left),
            // Its Update frame already told it.
            Driver::Client(_) => Ok(()),
        }
    }

    /// The engine's move `p` in `game` was accepted.
    pub fn moved(&mut self, game: &Game) {
        if let Driver::Gomocup(g) = self {
            g.moved(game);
        }
    }

    /// The processes to kill if the engine hangs, if it is a process.
    pub fn tree(&self) -> Option<ProcessTree> {
        match self {
            Driver::Builtin(_) => None,
            Driver::Gomocup(g) => Some(g.process.tree()),
            Driver::Client(c) => Some(c.process.tree()),
        }
    }

    /// The resident memory of the engine and every process it started.
    pub fn rss_bytes(&self) -> Option<u64> {
        match self {
            Driver::Builtin(_) => None,
            Driver::Gomocup(g) => g.process.rss_bytes(),
            Driver::Client(c) => c.process.rss_bytes(),
        }
    }

    /// Kills the engine at once (it hung).
    pub fn kill(&mut self) {
        match self {
            Driver::Builtin(_) => {}
            Driver::Gomocup(g) => g.process.kill(),
            Driver::Client(c) => c.process.kill(),
        }
    }

    /// Ends the engine: `END`, a short grace, then its whole process tree
    /// is killed.
    pub fn finish(mut self) {
        match &mut self {
            Driver::Builtin(_) => {}
            Driver::Gomocup(g) => g.process.shutdown(END_GRACE),
            Driver::Client(c) => {
                // The End frame (when the table ended the game) is sent;
                // a client leaves by itself once the connection closes.
                let _ = c.socket.shutdown(std::net::Shutdown::Both);
                let until = Instant::now() + END_GRACE;
                while c.process.try_wait().is_none() && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(5));
                }
                c.process.kill();
            }
        }
    }
}

/// The built-in engine, thinking on a thread of its own.
pub struct BuiltinDriver {
    requests: Sender<(Game, Duration)>,
}

impl BuiltinDriver {
    fn start(seat: Color, rule: Rule, config: EngineConfig, tx: Sender<Report>) -> BuiltinDriver {
        let (requests, rx) = channel::<(Game, Duration)>();
        let report = move |event| {
            let _ = tx.send(Report {
                seat,
                at: Instant::now(),
                event,
            });
        };
        report(Event::Ok);
        // The thread ends when the driver is dropped (its search is bounded
        // by the budget it was given).
        std::thread::spawn(move || {
            let mut engine = Engine::with_config(rule, config);
            while let Ok((game, budget)) = rx.recv() {
                match catch_unwind(AssertUnwindSafe(|| engine.analyse(&game, budget))) {
                    Ok(Ok(outcome)) => {
                        report(Event::Eval(outcome.score));
                        report(Event::Move(outcome.best));
                    }
                    Ok(Err(e)) => report(Event::Fault(Fault::Crash, e.to_string())),
                    Err(_) => {
                        report(Event::Fault(Fault::Crash, "the engine panicked".into()));
                        return;
                    }
                }
            }
        });
        BuiltinDriver { requests }
    }

    fn go(&mut self, game: &Game, budget: Duration) -> Result<(), String> {
        self.requests
            .send((game.clone(), budget))
            .map_err(|_| "the engine thread is gone".to_owned())
    }
}

/// A program written to the Omok document, connected to the arena's
/// referee for one game.
pub struct ClientDriver {
    process: EngineProcess,
    socket: TcpStream,
}

impl ClientDriver {
    /// Listens on 127.0.0.1 (port 0), starts the program with the address
    /// in its command line and waits (up to the startup limit, reported as
    /// a stall by the runner) for its connection; its `Connect` frame is
    /// its [`Event::Ok`].
    fn start(
        seat: Color,
        command: &str,
        setup: &DriverSetup,
        tx: Sender<Report>,
    ) -> Result<ClientDriver, String> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let line = command
            .replace("{host}", &addr.ip().to_string())
            .replace("{port}", &addr.port().to_string());
        let command = EngineCommand {
            line,
            dir: None,
            cpu: setup.cpu,
        };
        // Its standard output is not the protocol: only its end matters
        // (the connection tells the rest).
        let process = EngineProcess::spawn(&command, |_, _| {}).map_err(|e| e.to_string())?;
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let until = Instant::now() + setup.startup;
        let socket = loop {
            match listener.accept() {
                Ok((socket, _)) => break socket,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if Instant::now() >= until {
                        return Err(format!(
                            "no connection within {} ms",
                            setup.startup.as_millis()
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => return Err(e.to_string()),
            }
        };
        socket.set_nonblocking(false).map_err(|e| e.to_string())?;
        socket.set_nodelay(true).map_err(|e| e.to_string())?;
        let mut reader = socket.try_clone().map_err(|e| e.to_string())?;
        std::thread::spawn(move || {
            let send = |event| {
                tx.send(Report {
                    seat,
                    at: Instant::now(),
                    event,
                })
                .is_ok()
            };
            let mut frame = [0u8; FRAME_LEN];
            loop {
                if reader.read_exact(&mut frame).is_err() {
                    send(Event::Fault(Fault::Crash, "the client disconnected".into()));
                    return;
                }
                let event = match PlayerMsg::decode(frame) {
                    Ok(PlayerMsg::Connect) => Event::Ok,
                    Ok(PlayerMsg::Ready(_)) => continue,
                    Ok(PlayerMsg::Put(byte)) => match Point::from_byte(byte) {
                        Some(p) => Event::Move(p),
                        None => Event::OffBoard(format!("byte {byte:#04x}")),
                    },
                    Err(e) => Event::Fault(Fault::Protocol, e.to_string()),
                };
                if !send(event) {
                    return;
                }
            }
        });
        Ok(ClientDriver { process, socket })
    }
}

/// What a Gomocup engine's `time_left` says when there is no match clock
/// (the largest value Piskvork sends).
const NO_MATCH_LIMIT_MS: u64 = 2_147_483_647;

/// A Gomocup engine process, one game long.
pub struct GomocupDriver {
    process: EngineProcess,
    options: BTreeMap<String, String>,
    setup: DriverSetup,
    /// The moves the engine knows, in order.
    known: Vec<Point>,
}

impl GomocupDriver {
    fn start(
        seat: Color,
        command: &EngineCommand,
        options: BTreeMap<String, String>,
        setup: &DriverSetup,
        tx: Sender<Report>,
    ) -> Result<GomocupDriver, String> {
        let lenient = setup.lenient_output;
        let process = EngineProcess::spawn(command, move |out, at| {
            let event = match out {
                Output::Line(line) => classify(&line, lenient),
                Output::Closed => Some(Event::Fault(Fault::Crash, "the engine exited".into())),
            };
            if let Some(event) = event {
                let _ = tx.send(Report { seat, at, event });
            }
        })
        .map_err(|e| e.to_string())?;
        let mut driver = GomocupDriver {
            process,
            options,
            setup: setup.clone(),
            known: Vec::new(),
        };
        driver.send("START 15")?;
        Ok(driver)
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        tracing::trace!(to = self.process.pid(), "{line}");
        self.process.send(line).map_err(|e| e.to_string())
    }

    fn configure(&mut self, tc: TimeControl) -> Result<(), String> {
        // Exactly what the arena enforces: the per-move limit (or the
        // match time when moves have none) and the match time.
        let turn = tc.turn.or(tc.game).map_or(0, ms);
        let game = tc.game.map_or(0, ms);
        self.send(&format!("INFO timeout_turn {turn}"))?;
        self.send(&format!("INFO timeout_match {game}"))?;
        let left = tc.game.map_or(NO_MATCH_LIMIT_MS, ms);
        self.send(&format!("INFO time_left {left}"))?;
        if let Some(bytes) = self.setup.max_memory {
            self.send(&format!("INFO max_memory {bytes}"))?;
        }
        self.send("INFO game_type 1")?;
        self.send(&format!("INFO rule {}", self.setup.rule.gomocup_code()))?;
        for (key, value) in self.options.clone() {
            self.send(&format!("INFO {key} {value}"))?;
        }
        if self.setup.pause_idle {
            self.process.pause();
        }
        Ok(())
    }

    fn go(&mut self, game: &Game, left: Option<Duration>) -> Result<(), String> {
        if self.setup.pause_idle {
            self.process.resume();
        }
        if let Some(left) = left {
            self.send(&format!("INFO time_left {}", ms(left)))?;
        }
        for line in position_lines(&self.known, game.moves()) {
            self.send(&line)?;
        }
        Ok(())
    }

    fn moved(&mut self, game: &Game) {
        self.known = game.moves().to_vec();
        if self.setup.pause_idle {
            self.process.pause();
        }
    }
}

fn ms(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

/// What one line of a Gomocup engine means, if anything. Output the
/// protocol does not know is a protocol error, unless `lenient` (then it
/// is only logged, as c-gomoku-cli and Piskvork do).
pub fn classify(line: &str, lenient: bool) -> Option<Event> {
    let text = line.trim();
    let word = text
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_uppercase();
    match word.as_str() {
        "" | "DEBUG" | "SUGGEST" => None,
        "MESSAGE" => parse_eval(text).map(Event::Eval),
        "OK" => Some(Event::Ok),
        "ERROR" | "UNKNOWN" => Some(Event::Fault(Fault::Protocol, clip(text))),
        _ => {
            if let Some((x, y)) = text.split_once(',')
                && let (Ok(x), Ok(y)) = (x.trim().parse::<i64>(), y.trim().parse::<i64>())
            {
                let point = usize::try_from(x)
                    .ok()
                    .zip(usize::try_from(y).ok())
                    .and_then(|(x, y)| Point::new(x, y));
                return Some(match point {
                    Some(p) => Event::Move(p),
                    None => Event::OffBoard(clip(text)),
                });
            }
            if lenient {
                tracing::warn!("ignoring unexpected engine output {:?}", clip(text));
                return None;
            }
            Some(Event::Fault(
                Fault::Protocol,
                format!("unexpected output {:?}", clip(text)),
            ))
        }
    }
}

/// An evaluation in a `MESSAGE` line: the number after a word `ev`, `eval`
/// or `score` (as `ev 35`, `eval=-120`, `score: 40`).
fn parse_eval(text: &str) -> Option<i32> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == '=' || c == ':' || c == '|' || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(2).find_map(|w| {
        matches!(w[0].to_ascii_lowercase().as_str(), "ev" | "eval" | "score")
            .then(|| w[1].parse().ok())
            .flatten()
    })
}

/// Untrusted text made safe to show: control characters replaced, at most
/// 200 characters.
pub fn clip(text: &str) -> String {
    text.chars()
        .take(200)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_engine_lines() {
        assert_eq!(classify("7,7", false), Some(Event::Move(Point::CENTER)));
        assert_eq!(
            classify(" 7 , 7 \r", false),
            Some(Event::Move(Point::CENTER))
        );
        assert_eq!(
            classify("15,3", false),
            Some(Event::OffBoard("15,3".into()))
        );
        assert_eq!(
            classify("-1,3", false),
            Some(Event::OffBoard("-1,3".into()))
        );
        assert_eq!(classify("ok", false), Some(Event::Ok));
        assert_eq!(
            classify("MESSAGE depth 9 ev -35 nodes 1000", false),
            Some(Event::Eval(-35))
        );
        assert_eq!(classify("MESSAGE hello", false), None);
        assert_eq!(classify("DEBUG x", false), None);
        assert_eq!(classify("", false), None);
        assert!(matches!(
            classify("ERROR no", false),
            Some(Event::Fault(Fault::Protocol, _))
        ));
        assert!(
            matches!(classify("hello\u{1b}[2J", false), Some(Event::Fault(Fault::Protocol, t)) if !t.contains('\u{1b}'))
        );
        // Lenient: garbage is dropped, ERROR still counts.
        assert_eq!(classify("-\u{e} ev 118 nd 38k", true), None);
        assert!(matches!(
            classify("ERROR no", true),
            Some(Event::Fault(Fault::Protocol, _))
        ));
    }

    #[test]
    fn parses_entrants() {
        assert!(matches!(
            EntrantKind::parse("builtin:nodes=500,depth=4").unwrap(),
            EntrantKind::Builtin {
                nodes: Some(500),
                depth: Some(4),
                threads: 1,
                ..
            }
        ));
        assert!(EntrantKind::parse("builtin:speed=3").is_err());
        assert!(EntrantKind::parse("builtin:depth").is_err());
        assert!(matches!(
            EntrantKind::parse("./pbrain-x --fast").unwrap(),
            EntrantKind::Gomocup { command, .. } if command == "./pbrain-x --fast"
        ));
        assert!(EntrantKind::parse(" ").is_err());
    }
}
