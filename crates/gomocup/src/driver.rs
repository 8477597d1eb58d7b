//! The manager's side of the Gomocup protocol: engine processes, and an
//! external Gomocup engine as a [`renju::Player`].
//!
//! [`EngineProcess`] is the process layer every manager shares (the bot's
//! `--brain`, `madang match`, the arena): the engine runs in a process
//! group of its own, and [`ProcessTree`] finds everything it started, even
//! children that left the group or the session (`setsid`, double forks),
//! so that killing it kills them all and their memory counts as the
//! engine's; its output is read by a thread, in lines of bounded length,
//! each stamped with the instant it arrived; dropping it ends the whole
//! tree.
//!
//! [`ExternalBrain::spawn`] starts the engine process and greets it
//! (`START 15`, `ABOUT`). Each [`Player::pick`] sends the time limits, then
//! the position: `BEGIN` on an empty board, `TURN x,y` when the game only
//! grew by the opponent's move since the brain's last one, otherwise
//! `BOARD ... DONE`. Every wait has a timeout.

// libc calls (signals to process groups, CPU affinity, limits) need unsafe;
// each block says why it is sound.
#![allow(unsafe_code)]

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use renju::{Game, Point, Rule};
use renju::{Player, PlayerError};
use thiserror::Error;

use crate::{format_point, parse_point};

/// Time a brain gets to start (load its weights) and to answer `OK`.
const STARTUP: Duration = Duration::from_secs(30);
/// Time a brain may run over its move budget before it is declared hung.
const GRACE: Duration = Duration::from_millis(1000);
/// The longest output line kept; the rest of a longer line is dropped, so
/// that an engine printing without newlines cannot fill the memory.
pub const MAX_LINE: usize = 4096;
/// How long a process gets to exit by itself after `END` before its group
/// is killed.
pub const END_GRACE: Duration = Duration::from_millis(200);

/// Why the external engine could not be used.
#[derive(Debug, Error)]
pub enum DriverError {
    /// The command line is empty or badly quoted.
    #[error("bad command line {0:?}")]
    Command(String),
    /// The process could not be started or written to.
    #[error("engine process: {0}")]
    Io(#[from] std::io::Error),
    /// The engine said something the protocol does not allow.
    #[error("engine broke the protocol: {0}")]
    Protocol(String),
    /// The engine did not answer in time.
    #[error("engine did not answer within {0:?}")]
    Timeout(Duration),
    /// The engine's output ended.
    #[error("engine exited")]
    Exited,
}

impl From<DriverError> for PlayerError {
    fn from(e: DriverError) -> Self {
        PlayerError::Failed(e.to_string())
    }
}

/// How to start an engine.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EngineCommand {
    /// The command line: words separated by spaces, with `"..."` or
    /// `'...'` quoting.
    pub line: String,
    /// The working directory; by default the program's own directory when
    /// the program is given with a path (brains find their data files next
    /// to themselves, as under Piskvork), else the current one.
    pub dir: Option<PathBuf>,
    /// Pin the process (and everything it starts) to this CPU core.
    pub cpu: Option<usize>,
}

impl EngineCommand {
    /// A command line with the default directory and no pinning.
    pub fn new(line: impl Into<String>) -> EngineCommand {
        EngineCommand {
            line: line.into(),
            ..EngineCommand::default()
        }
    }
}

/// What an engine process printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// One line, without its line ending, cut at [`MAX_LINE`] bytes.
    Line(String),
    /// The output ended: the process exited or closed its standard output.
    Closed,
}

/// An engine process in a process group of its own.
#[derive(Debug)]
pub struct EngineProcess {
    child: Child,
    stdin: ChildStdin,
    /// The engine and everything it starts.
    tree: ProcessTree,
    reaped: Option<ExitStatus>,
}

impl EngineProcess {
    /// Starts `command`; every line it prints is handed to `on_output` (on
    /// a reader thread) with the instant it was read, then
    /// [`Output::Closed`] once.
    pub fn spawn(
        command: &EngineCommand,
        mut on_output: impl FnMut(Output, Instant) + Send + 'static,
    ) -> Result<EngineProcess, DriverError> {
        let words = split_command(&command.line)
            .filter(|w| !w.is_empty())
            .ok_or_else(|| DriverError::Command(command.line.clone()))?;
        let mut program = PathBuf::from(&words[0]);
        let own_dir = program
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map(Path::to_path_buf);
        if own_dir.is_some() {
            // A relative path would be resolved in the new working
            // directory below: make it absolute first.
            program = std::fs::canonicalize(&program)?;
        }
        become_subreaper();
        let tag = format!(
            "{}.{}",
            std::process::id(),
            NEXT_TAG.fetch_add(1, Ordering::Relaxed)
        );
        let mut cmd = Command::new(&program);
        cmd.args(&words[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            // Its own group, and a tag its descendants inherit wherever
            // they move: see [`ProcessTree`].
            .process_group(0)
            .env(TAG_VAR, &tag);
        if let Some(dir) = command.dir.clone().or(own_dir) {
            cmd.current_dir(dir);
        }
        if let Some(cpu) = command.cpu {
            // SAFETY: only async-signal-safe calls between fork and exec.
            unsafe {
                cmd.pre_exec(move || pin_to_cpu(cpu));
            }
        }
        let mut child = cmd.spawn()?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let tree = ProcessTree {
            root: child.id() as libc::pid_t,
            tag,
        };
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(line) = read_bounded_line(&mut reader) {
                on_output(Output::Line(line), Instant::now());
            }
            on_output(Output::Closed, Instant::now());
        });
        Ok(EngineProcess {
            child,
            stdin,
            tree,
            reaped: None,
        })
    }

    /// The process id of the engine (also its process group's id).
    pub fn pid(&self) -> u32 {
        self.tree.root()
    }

    /// The engine's process tree, for another thread to kill (a watchdog).
    pub fn tree(&self) -> ProcessTree {
        self.tree.clone()
    }

    /// Writes one line to the engine.
    pub fn send(&mut self, line: &str) -> Result<(), DriverError> {
        writeln!(self.stdin, "{line}")?;
        self.stdin.flush()?;
        Ok(())
    }

    /// Stops the whole tree (`SIGSTOP`), so that the engine cannot think
    /// while it is not on move.
    pub fn pause(&self) {
        self.tree.signal(libc::SIGSTOP, self.reaped.is_none());
    }

    /// Lets a paused tree run again (`SIGCONT`).
    pub fn resume(&self) {
        self.tree.signal(libc::SIGCONT, self.reaped.is_none());
    }

    /// Kills the whole tree at once (`SIGKILL`) and reaps the engine and
    /// every orphan of it that was handed to this process.
    pub fn kill(&mut self) {
        let members = self.tree.kill_all(self.reaped.is_none());
        if self.reaped.is_none() {
            self.reaped = self.child.wait().ok();
        }
        self.tree.reap(&members);
    }

    /// The engine's exit status, if it has exited (it is reaped then).
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        if self.reaped.is_none() {
            self.reaped = self.child.try_wait().ok().flatten();
        }
        self.reaped
    }

    /// The resident memory in bytes of the engine and every process it
    /// started, if any of them is still running.
    pub fn rss_bytes(&self) -> Option<u64> {
        self.tree.rss_bytes(self.reaped.is_none())
    }

    /// Ends the engine politely: `END`, up to `grace` to exit by itself,
    /// then `SIGKILL` to the whole tree, which also ends any child it
    /// left running.
    pub fn shutdown(&mut self, grace: Duration) {
        if self.reaped.is_none() {
            self.resume();
            let _ = self.send("END");
            let deadline = Instant::now() + grace;
            while self.try_wait().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        self.kill();
    }
}

impl Drop for EngineProcess {
    fn drop(&mut self) {
        self.shutdown(END_GRACE);
    }
}

/// The environment variable that carries an engine's tag to every process
/// it starts (children inherit it whatever group or session they move to).
pub const TAG_VAR: &str = "MADANG_ENGINE_TAG";

/// Numbers the tags of the engines this process starts.
static NEXT_TAG: AtomicU64 = AtomicU64::new(0);

/// Makes this process the reaper of its orphaned descendants
/// (`PR_SET_CHILD_SUBREAPER`): a child an engine double-forks and leaves
/// behind is handed to the manager rather than to init, so it can still be
/// found (by its tag), killed and reaped.
fn become_subreaper() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag of
        // this process.
        let done = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        if done != 0 {
            tracing::warn!(
                "cannot become a subreaper: {}",
                std::io::Error::last_os_error()
            );
        }
    });
}

/// An engine process and every process it started, found afresh in
/// `/proc` each time it is asked: the root (while it is not reaped) and its
/// descendants by parent, the members of its process group, and the
/// processes carrying its tag ([`TAG_VAR`]) that were orphaned and handed
/// to this process, with their descendants. A process that both leaves
/// the session and clears its environment before its parent exits is the
/// only one that escapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessTree {
    root: libc::pid_t,
    tag: String,
}

/// What `/proc/PID/stat` says of a process.
#[derive(Debug, Clone, Copy)]
struct ProcStat {
    pid: libc::pid_t,
    ppid: libc::pid_t,
    pgrp: libc::pid_t,
    zombie: bool,
    rss_pages: u64,
}

/// How many times killing a tree looks again for members that appeared.
const KILL_ROUNDS: usize = 200;

impl ProcessTree {
    /// The engine's process id (also its process group's id).
    pub fn root(&self) -> u32 {
        self.root as u32
    }

    /// The members alive or not yet reaped. `root_unreaped` says whether
    /// the root's pid still names the engine (once it is reaped the pid
    /// may be reused, so its children by parent no longer count).
    fn members(&self, root_unreaped: bool) -> Vec<ProcStat> {
        let procs = all_processes();
        // SAFETY: getpid has no preconditions.
        let me = unsafe { libc::getpid() };
        let mut children: HashMap<libc::pid_t, Vec<libc::pid_t>> = HashMap::new();
        for p in &procs {
            children.entry(p.ppid).or_default().push(p.pid);
        }
        let mut todo: Vec<libc::pid_t> = procs
            .iter()
            .filter(|p| {
                (root_unreaped && p.pid == self.root)
                    || p.pgrp == self.root
                    || (p.ppid == me && has_tag(p.pid, &self.tag))
            })
            .map(|p| p.pid)
            .collect();
        let mut found = HashSet::new();
        while let Some(pid) = todo.pop() {
            if found.insert(pid)
                && let Some(kids) = children.get(&pid)
            {
                todo.extend(kids);
            }
        }
        procs
            .into_iter()
            .filter(|p| found.contains(&p.pid))
            .collect()
    }

    /// Sends `sig` to every live member.
    fn signal(&self, sig: libc::c_int, root_unreaped: bool) {
        for p in self.members(root_unreaped) {
            if !p.zombie {
                send_signal(p.pid, sig);
            }
        }
    }

    /// Kills every member (`SIGSTOP` first, so that none forks a new one
    /// unseen, then `SIGKILL`), looking again until none is left running.
    /// Returns every member seen, for [`ProcessTree::reap`].
    pub fn kill_all(&self, root_unreaped: bool) -> HashSet<u32> {
        let mut seen = HashSet::new();
        for round in 0..KILL_ROUNDS {
            let live: Vec<libc::pid_t> = self
                .members(root_unreaped)
                .iter()
                .filter(|p| !p.zombie)
                .map(|p| p.pid)
                .collect();
            if live.is_empty() {
                break;
            }
            for &pid in &live {
                send_signal(pid, libc::SIGSTOP);
            }
            for p in self.members(root_unreaped) {
                seen.insert(p.pid as u32);
                if !p.zombie {
                    send_signal(p.pid, libc::SIGKILL);
                }
            }
            if round > 0 {
                // Killed processes take a moment to become zombies.
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        seen
    }

    /// Reaps the members (but the root, its [`Child`]'s to reap) that
    /// became this process's children once their parents died, waiting at
    /// most a second for the last of them to die.
    pub fn reap(&self, members: &HashSet<u32>) {
        // SAFETY: getpid has no preconditions.
        let me = unsafe { libc::getpid() };
        let until = Instant::now() + Duration::from_secs(1);
        loop {
            let left: Vec<ProcStat> = all_processes()
                .into_iter()
                .filter(|p| p.pid != self.root && members.contains(&(p.pid as u32)))
                .collect();
            let mine: Vec<libc::pid_t> = left
                .iter()
                .filter(|p| p.ppid == me && p.zombie)
                .map(|p| p.pid)
                .collect();
            for &pid in &mine {
                // SAFETY: waitpid on a zombie child of this process only
                // collects its status.
                unsafe {
                    libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
                }
            }
            if left.len() == mine.len() {
                return;
            }
            if Instant::now() >= until {
                tracing::warn!(left = left.len(), "engine processes did not die");
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Whether any member is still running (zombies do not count).
    pub fn alive(&self, root_unreaped: bool) -> bool {
        self.members(root_unreaped).iter().any(|p| !p.zombie)
    }

    /// The resident memory of every running member, if any runs.
    pub fn rss_bytes(&self, root_unreaped: bool) -> Option<u64> {
        let live: Vec<ProcStat> = self
            .members(root_unreaped)
            .into_iter()
            .filter(|p| !p.zombie)
            .collect();
        if live.is_empty() {
            return None;
        }
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let page = u64::try_from(page).unwrap_or(4096);
        Some(live.iter().map(|p| p.rss_pages * page).sum())
    }

    /// Kills every member at once (for a watchdog on another thread; the
    /// owner of the [`EngineProcess`] reaps).
    pub fn kill(&self) {
        self.kill_all(true);
    }
}

fn send_signal(pid: libc::pid_t, sig: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// Every process in `/proc` (those that vanish while it is read are left
/// out).
fn all_processes() -> Vec<ProcStat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter_map(read_stat)
        .collect()
}

fn read_stat(pid: libc::pid_t) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: the fields start
    // after the last `)`.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(ProcStat {
        pid,
        zombie: matches!(*fields.first()?, "Z" | "X"),
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        // Field 24 of stat, the 22nd after the command name.
        rss_pages: fields.get(21)?.parse().ok()?,
    })
}

/// Whether process `pid`'s environment holds the tag `tag`.
fn has_tag(pid: libc::pid_t, tag: &str) -> bool {
    let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let want = format!("{TAG_VAR}={tag}");
    env.split(|&b| b == 0).any(|var| var == want.as_bytes())
}

fn pin_to_cpu(cpu: usize) -> std::io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET and
    // sched_setaffinity only touch it and the calling process.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Reads up to the next newline, keeping at most [`MAX_LINE`] bytes;
/// `None` at the end of the stream (or on a read error).
fn read_bounded_line(reader: &mut impl BufRead) -> Option<String> {
    let mut line = Vec::new();
    let mut any = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        if buf.is_empty() {
            return any.then(|| finish_line(line));
        }
        any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        let room = MAX_LINE.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            return Some(finish_line(line));
        }
    }
}

fn finish_line(mut line: Vec<u8>) -> String {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    String::from_utf8_lossy(&line).into_owned()
}

/// An external Gomocup engine process.
pub struct ExternalBrain {
    command: String,
    name: String,
    process: EngineProcess,
    lines: Receiver<Output>,
    rule: Rule,
    /// The moves the brain knows, in order.
    known: Vec<Point>,
    /// Whether the brain has seen a game since `START` (so the next one
    /// needs `RESTART`).
    dirty: bool,
}

impl ExternalBrain {
    /// Starts the engine `command_line` (words separated by spaces, with
    /// `"..."` or `'...'` quoting) and greets it.
    pub fn spawn(command_line: &str) -> Result<ExternalBrain, DriverError> {
        let (tx, lines) = channel();
        let process = EngineProcess::spawn(&EngineCommand::new(command_line), move |out, _| {
            let _ = tx.send(out);
        })?;
        let mut brain = ExternalBrain {
            command: command_line.to_owned(),
            name: command_line.to_owned(),
            process,
            lines,
            rule: Rule::Renju,
            known: Vec::new(),
            dirty: false,
        };
        brain.send("START 15")?;
        brain.expect_ok(STARTUP)?;
        brain.send("ABOUT")?;
        let about = brain.reply(STARTUP)?;
        if let Some(name) = about_field(&about, "name") {
            let version = about_field(&about, "version").unwrap_or_default();
            brain.name = format!("{name} {version}").trim().to_owned();
        }
        Ok(brain)
    }

    /// The command line the brain was started with.
    pub fn command(&self) -> &str {
        &self.command
    }

    fn send(&mut self, line: &str) -> Result<(), DriverError> {
        tracing::trace!(to = %self.name, "{line}");
        self.process.send(line)
    }

    /// The next line that is not a `MESSAGE` or `DEBUG` comment.
    fn reply(&mut self, timeout: Duration) -> Result<String, DriverError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(Output::Line(l)) => l,
                Err(RecvTimeoutError::Timeout) => return Err(DriverError::Timeout(timeout)),
                Ok(Output::Closed) | Err(RecvTimeoutError::Disconnected) => {
                    return Err(DriverError::Exited);
                }
            };
            tracing::trace!(from = %self.name, "{line}");
            let word = line.split_whitespace().next().unwrap_or("");
            match word.to_ascii_uppercase().as_str() {
                "" | "MESSAGE" | "DEBUG" | "SUGGEST" => continue,
                "ERROR" | "UNKNOWN" => return Err(DriverError::Protocol(line)),
                _ => return Ok(line),
            }
        }
    }

    fn expect_ok(&mut self, timeout: Duration) -> Result<(), DriverError> {
        let line = self.reply(timeout)?;
        if line.trim().eq_ignore_ascii_case("OK") {
            Ok(())
        } else {
            Err(DriverError::Protocol(format!("expected OK, got {line:?}")))
        }
    }

    /// Sends the position (and limits) and waits for the brain's move.
    fn play(&mut self, game: &Game, budget: Duration) -> Result<Point, DriverError> {
        let ms = budget.as_millis().max(1) as u64;
        self.send(&format!("INFO timeout_turn {ms}"))?;
        // No match clock: each move has its own budget.
        self.send("INFO timeout_match 0")?;
        self.send(&format!("INFO time_left {}", ms.saturating_mul(1000)))?;
        let moves = game.moves();
        for line in position_lines(&self.known, moves) {
            self.send(&line)?;
        }
        self.dirty = true;
        let line = self.reply(budget + GRACE)?;
        let p = parse_point(&line)
            .ok_or_else(|| DriverError::Protocol(format!("expected a move x,y, got {line:?}")))?;
        if let Err(e) = game.check(p) {
            return Err(DriverError::Protocol(format!(
                "illegal move {}: {e}",
                format_point(p)
            )));
        }
        self.known = moves.to_vec();
        self.known.push(p);
        Ok(p)
    }
}

impl Player for ExternalBrain {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn new_game(&mut self, rule: Rule) -> Result<(), PlayerError> {
        if self.dirty {
            self.send("RESTART")?;
            if let Err(DriverError::Protocol(_)) = self.expect_ok(STARTUP) {
                // Some brains know no RESTART; a second START is universal.
                self.send("START 15")?;
                self.expect_ok(STARTUP)?;
            }
        }
        self.rule = rule;
        self.known.clear();
        self.dirty = false;
        self.send(&format!("INFO rule {}", rule.gomocup_code()))?;
        Ok(())
    }

    fn pick(&mut self, game: &Game, budget: Duration) -> Result<Point, PlayerError> {
        if game.result().is_some() {
            return Err(PlayerError::NoMove);
        }
        if game.rule() != self.rule {
            self.new_game(game.rule())?;
        }
        let result = self.play(game, budget);
        if result.is_err() {
            // After a failure the brain's view of the game is unknown.
            self.known.clear();
        }
        Ok(result?)
    }
}

/// The commands that bring an engine that knows the moves `known` to the
/// position `moves`, its turn: `TURN x,y` when the game only grew by the
/// opponent's move, `BEGIN` on an empty board, otherwise `BOARD ... DONE`
/// (which replaces whatever position the engine had).
pub fn position_lines(known: &[Point], moves: &[Point]) -> Vec<String> {
    if moves.len() == known.len() + 1 && moves.starts_with(known) {
        let last = *moves.last().expect("one more move");
        return vec![format!("TURN {}", format_point(last))];
    }
    if moves.is_empty() {
        return vec!["BEGIN".into()];
    }
    let mut lines = vec!["BOARD".to_owned()];
    // Field 1 is the engine's own stone: the side to move's.
    let mine = moves.len() % 2;
    for (i, &p) in moves.iter().enumerate() {
        let field = if i % 2 == mine { 1 } else { 2 };
        lines.push(format!("{},{field}", format_point(p)));
    }
    lines.push("DONE".into());
    lines
}

/// Splits a command line into words: spaces separate, `"..."` and `'...'`
/// quote. `None` on an unterminated quote.
pub fn split_command(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return None;
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// The value of `key="value"` in an `ABOUT` line.
fn about_field(about: &str, key: &str) -> Option<String> {
    let start = about.find(&format!("{key}=\""))? + key.len() + 2;
    let len = about[start..].find('"')?;
    Some(about[start..start + len].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_command_lines() {
        assert_eq!(
            split_command("a  b \"c d\" 'e'").unwrap(),
            ["a", "b", "c d", "e"]
        );
        assert_eq!(split_command("").unwrap(), Vec::<String>::new());
        assert_eq!(split_command("\"\"").unwrap(), [""]);
        assert!(split_command("a \"b").is_none());
    }

    #[test]
    fn lines_are_bounded() {
        let long = "x".repeat(MAX_LINE + 100);
        let text = format!("a\r\n{long}\nlast");
        let mut reader = BufReader::with_capacity(16, text.as_bytes());
        assert_eq!(read_bounded_line(&mut reader).as_deref(), Some("a"));
        assert_eq!(
            read_bounded_line(&mut reader).map(|l| l.len()),
            Some(MAX_LINE)
        );
        assert_eq!(read_bounded_line(&mut reader).as_deref(), Some("last"));
        assert_eq!(read_bounded_line(&mut reader), None);
    }

    /// Starts `line`, waits for its first line of output and kills it;
    /// then nothing of its tree may be left, zombies included.
    fn nothing_left_after_killing(line: &str) {
        let (tx, rx) = channel();
        let mut process = EngineProcess::spawn(&EngineCommand::new(line), move |out, _| {
            let _ = tx.send(out);
        })
        .unwrap();
        let first = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(first, Output::Line("started".into()));
        let tree = process.tree();
        assert!(tree.members(true).len() >= 2, "{:?}", tree.members(true));
        process.shutdown(Duration::from_millis(10));
        // The reader sees the end of the output once every writer is gone.
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(10)).unwrap(),
            Output::Closed
        );
        assert!(
            tree.members(false).is_empty(),
            "left behind: {:?}",
            tree.members(false)
        );
    }

    #[test]
    fn killing_the_tree_ends_forked_children() {
        // The shell forks a sleeper that would outlive it, then hangs.
        nothing_left_after_killing("sh -c 'sleep 30 & echo started; sleep 30'");
    }

    #[test]
    fn children_in_a_session_of_their_own_are_killed_too() {
        // `setsid` puts a shell in a new session, which starts a sleeper
        // and exits at once: the orphaned sleeper is in neither the
        // engine's group nor its tree by parent, only its tag finds it.
        nothing_left_after_killing(
            "sh -c 'setsid sh -c \"sleep 30 >/dev/null &\"; echo started; sleep 30'",
        );
    }

    #[test]
    fn pinned_engines_run_on_their_core() {
        let (tx, rx) = channel();
        let command = EngineCommand {
            line: "grep Cpus_allowed_list /proc/self/status".into(),
            dir: None,
            cpu: Some(0),
        };
        let _process = EngineProcess::spawn(&command, move |out, _| {
            let _ = tx.send(out);
        })
        .unwrap();
        let line = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(line, Output::Line("Cpus_allowed_list:\t0".into()));
    }

    #[test]
    fn positions_by_turn_begin_or_board() {
        let p = |s: &str| s.parse::<Point>().unwrap();
        assert_eq!(position_lines(&[], &[]), ["BEGIN"]);
        assert_eq!(position_lines(&[], &[p("h8")]), ["TURN 7,7"]);
        assert_eq!(
            position_lines(&[p("h8")], &[p("h8"), p("h9"), p("a1")]),
            ["BOARD", "7,7,2", "7,8,1", "0,0,2", "DONE"]
        );
    }

    #[test]
    fn reads_about_fields() {
        let a = "name=\"figrid\", version=\"1.2.0\", author=\"x\"";
        assert_eq!(about_field(a, "name").as_deref(), Some("figrid"));
        assert_eq!(about_field(a, "version").as_deref(), Some("1.2.0"));
        assert_eq!(about_field(a, "country"), None);
    }
}
