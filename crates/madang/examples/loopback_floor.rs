//! The loopback floor (issue 10): what the load test's traffic costs this machine with no WebSocket framing, no
//! JSON and no rooms, so that `madang serve-load`'s figures can be set against what no server could go below.
//!
//! `loopback_floor run` starts `loopback_floor server` as a child process (so each process's CPU is read apart,
//! from `/proc`) and drives it over loopback TCP with the load test's connections and message pattern: per room 2
//! players and `--spectators` spectators, one connection each; every room moves every `--move-every` (staggered
//! over the period), the players alternating; a move is a 60-byte message from the mover, and the server answers
//! it with one 170-byte message to each member of the room (the mover included, as `madang serve` does with
//! `moved`). Messages have fixed sizes, so there is no framing to parse; the server is one `epoll` loop per thread
//! (mio) with no task, channel or allocation per message, and the generator the same.
//!
//! Like serve-load, a player sends its room's next move when it is due *and* it has seen the previous move, so
//! when the pair cannot keep up the offered rate falls: "carried" is what was sent. Latency is mover's send ->
//! receipt, measured in the generator (both ends are in its process).
//!
//! Reproduce: `cargo run --release -p madang --example loopback_floor -- run --rooms 2500` (see `--help` for the
//! variants: `--nodelay false`, `--batch`, `--sndbuf`/`--rcvbuf`, `--server-threads`, `--gen-threads`, `--spin`).
//! It needs an open-file limit of at least the number of connections in each process (10,000 at 2,500 rooms).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, BufRead, BufReader, ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};
use socket2::{Domain, SockRef, Socket, Type};

/// A move, client -> server.
const MOVE_LEN: usize = 60;
/// A move's announcement, server -> each member of the room (the size of a `moved`).
const MOVED_LEN: usize = 170;
/// The bytes of a move the server copies into its announcement: send time, sequence number, mover, room.
const HEADER_LEN: usize = 20;
/// The listener's token: connections are numbered from 0.
const LISTENER: Token = Token(usize::MAX);
/// A free slot in a room's member list.
const NOBODY: usize = usize::MAX;
/// The highest room number a server accepts (its room table grows to the highest number seen).
const MAX_ROOM: usize = 1 << 20;
/// How long the generator keeps playing after the measured window, so that the window's last moves arrive.
const GRACE: Duration = Duration::from_secs(1);

#[derive(Parser)]
#[command(
    about = "The loopback floor of the web load test: the same traffic, no WebSocket, no JSON"
)]
struct Cli {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Subcommand)]
enum Mode {
    /// Start a floor server as a child process and load it; print the figures.
    Run(RunArgs),
    /// The floor server (started by `run`): prints its listening addresses, then answers `stats` lines on stdin
    /// until stdin closes.
    #[command(hide = true)]
    Server(ServerArgs),
}

/// Socket options, applied to every connection of both processes.
#[derive(Args, Clone, Debug)]
struct SocketOpts {
    /// TCP_NODELAY (`madang serve` sets it; without it a small message can wait for a delayed ACK).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    nodelay: bool,
    /// SO_SNDBUF in bytes (the kernel doubles it); the kernel's default if not given.
    #[arg(long)]
    sndbuf: Option<usize>,
    /// SO_RCVBUF in bytes (the kernel doubles it); the kernel's default if not given.
    #[arg(long)]
    rcvbuf: Option<usize>,
}

impl SocketOpts {
    fn apply(&self, socket: SockRef<'_>) -> io::Result<()> {
        socket.set_tcp_nodelay(self.nodelay)?;
        if let Some(size) = self.sndbuf {
            socket.set_send_buffer_size(size)?;
        }
        if let Some(size) = self.rcvbuf {
            socket.set_recv_buffer_size(size)?;
        }
        Ok(())
    }

    fn to_args(&self) -> Vec<String> {
        let mut args = vec!["--nodelay".to_owned(), self.nodelay.to_string()];
        if let Some(size) = self.sndbuf {
            args.extend(["--sndbuf".to_owned(), size.to_string()]);
        }
        if let Some(size) = self.rcvbuf {
            args.extend(["--rcvbuf".to_owned(), size.to_string()]);
        }
        args
    }
}

/// The server's options.
#[derive(Args, Clone, Debug)]
struct ServerArgs {
    /// Server threads, each with its own listener and `epoll`; room N is served by thread N mod threads.
    #[arg(long, default_value_t = 1)]
    server_threads: usize,
    /// Queue every message of a wake-up and write each connection's queue once, after the wake-up's events
    /// (instead of one write per message as it is made).
    #[arg(long)]
    batch: bool,
    /// Never sleep in `epoll_wait` (timeout 0): the server is always awake, so senders never pay its wake-up.
    #[arg(long)]
    spin: bool,
    #[command(flatten)]
    socket: SocketOpts,
}

/// The generator's options.
#[derive(Args, Debug)]
struct RunArgs {
    /// Rooms, each with 2 players.
    #[arg(long, default_value_t = 2500)]
    rooms: usize,
    /// Spectators per room.
    #[arg(long, default_value_t = 2)]
    spectators: usize,
    /// Time between two moves of a room (`100ms`, `1s`).
    #[arg(long, default_value = "100ms", value_parser = parse_duration)]
    move_every: Duration,
    /// Play before the measured window starts.
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    warmup: Duration,
    /// The measured window.
    #[arg(long, default_value = "25s", value_parser = parse_duration)]
    duration: Duration,
    /// Generator threads, each with its own `epoll`; room N is played by thread N mod threads.
    #[arg(long, default_value_t = 2)]
    gen_threads: usize,
    #[command(flatten)]
    server: ServerArgs,
}

/// `100ms`, `30s`, `2m`: every duration option takes its unit.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}`: expected a number and a unit"))?;
    match unit {
        "ms" => Ok(Duration::from_millis(number)),
        "s" => Ok(Duration::from_secs(number)),
        "m" => Ok(Duration::from_secs(number * 60)),
        _ => Err(format!("`{text}`: the unit is one of ms, s, m")),
    }
}

fn main() -> Result<()> {
    match Cli::parse().mode {
        Mode::Run(args) => run(&args),
        Mode::Server(args) => server_main(&args),
    }
}

/// System calls and wake-ups of one process, shared by its threads.
#[derive(Default)]
struct Counters {
    reads: AtomicU64,
    writes: AtomicU64,
    waits: AtomicU64,
    blocked: AtomicU64,
}

/// A thread's counts since it last added them to the process's [`Counters`] (one atomic add per wake-up, not
/// per system call).
#[derive(Default)]
struct Tally {
    reads: u64,
    writes: u64,
    waits: u64,
    blocked: u64,
}

impl Counters {
    fn add(&self, tally: &mut Tally) {
        self.reads.fetch_add(tally.reads, Relaxed);
        self.writes.fetch_add(tally.writes, Relaxed);
        self.waits.fetch_add(tally.waits, Relaxed);
        self.blocked.fetch_add(tally.blocked, Relaxed);
        *tally = Tally::default();
    }

    fn snapshot(&self) -> [u64; 4] {
        [
            self.reads.load(Relaxed),
            self.writes.load(Relaxed),
            self.waits.load(Relaxed),
            self.blocked.load(Relaxed),
        ]
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The server

/// One server connection.
struct Conn {
    stream: TcpStream,
    /// Room and role, from the connection's first message.
    member: Option<(usize, usize)>,
    /// The start of a message that arrived in pieces.
    partial: Vec<u8>,
    /// Bytes not yet written: the socket was full, or (with `--batch`) the wake-up is not over.
    out: Vec<u8>,
}

/// One server thread's connections, and how it writes to them.
struct Conns {
    slots: Vec<Option<Conn>>,
    /// Connections with queued bytes to write at the end of the wake-up (`--batch`).
    dirty: Vec<usize>,
    batch: bool,
    tally: Tally,
}

impl Conns {
    fn send(&mut self, token: usize, message: &[u8]) {
        let Some(conn) = self.slots[token].as_mut() else {
            return;
        };
        if !conn.out.is_empty() || self.batch {
            if conn.out.is_empty() {
                self.dirty.push(token);
            }
            conn.out.extend_from_slice(message);
            return;
        }
        self.tally.writes += 1;
        match conn.stream.write(message) {
            Ok(n) if n == message.len() => {}
            Ok(n) => {
                self.tally.blocked += 1;
                conn.out.extend_from_slice(&message[n..]);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                self.tally.blocked += 1;
                conn.out.extend_from_slice(message);
            }
            Err(_) => self.slots[token] = None,
        }
    }

    fn flush(&mut self, token: usize) {
        let Some(conn) = self.slots[token].as_mut() else {
            return;
        };
        while !conn.out.is_empty() {
            self.tally.writes += 1;
            match conn.stream.write(&conn.out) {
                Ok(n) => {
                    conn.out.drain(..n);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    self.tally.blocked += 1;
                    return;
                }
                Err(_) => {
                    self.slots[token] = None;
                    return;
                }
            }
        }
    }
}

/// One server thread: a listener, its connections and its rooms.
struct Server {
    poll: Poll,
    listener: TcpListener,
    conns: Conns,
    /// Each room's members by role (players 0 and 1, then spectators); [`NOBODY`] for a free role.
    rooms: Vec<Vec<usize>>,
    args: ServerArgs,
}

impl Server {
    fn new(mut listener: TcpListener, args: ServerArgs) -> io::Result<Self> {
        let poll = Poll::new()?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        Ok(Server {
            poll,
            listener,
            conns: Conns {
                slots: Vec::new(),
                dirty: Vec::new(),
                batch: args.batch,
                tally: Tally::default(),
            },
            rooms: Vec::new(),
            args,
        })
    }

    /// Serves until the process ends.
    fn run(mut self, counters: &Counters) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        let mut buf = vec![0u8; 4096];
        let timeout = self.args.spin.then_some(Duration::ZERO);
        loop {
            self.poll.poll(&mut events, timeout)?;
            self.conns.tally.waits += 1;
            for event in &events {
                if event.token() == LISTENER {
                    self.accept()?;
                    continue;
                }
                let token = event.token().0;
                if event.is_writable() {
                    self.conns.flush(token);
                }
                if event.is_readable() || event.is_read_closed() {
                    self.read(token, &mut buf);
                }
            }
            while let Some(token) = self.conns.dirty.pop() {
                self.conns.flush(token);
            }
            counters.add(&mut self.conns.tally);
        }
    }

    fn accept(&mut self) -> io::Result<()> {
        loop {
            let (mut stream, _) = match self.listener.accept() {
                Ok(accepted) => accepted,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            };
            self.args.socket.apply(SockRef::from(&stream))?;
            let token = self.conns.slots.len();
            self.poll.registry().register(
                &mut stream,
                Token(token),
                Interest::READABLE | Interest::WRITABLE,
            )?;
            self.conns.slots.push(Some(Conn {
                stream,
                member: None,
                partial: Vec::new(),
                out: Vec::new(),
            }));
        }
    }

    fn read(&mut self, token: usize, buf: &mut [u8]) {
        loop {
            let Some(conn) = self.conns.slots[token].as_mut() else {
                return;
            };
            self.conns.tally.reads += 1;
            let n = match conn.stream.read(buf) {
                Ok(0) => return self.close(token),
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return self.close(token),
            };
            let mut partial = std::mem::take(&mut conn.partial);
            partial.extend_from_slice(&buf[..n]);
            let whole = partial.len() / MOVE_LEN * MOVE_LEN;
            for message in partial[..whole].chunks_exact(MOVE_LEN) {
                self.message(token, message);
            }
            partial.drain(..whole);
            if let Some(conn) = self.conns.slots[token].as_mut() {
                conn.partial = partial;
            }
            // A short read emptied the socket: another read would only say so (one system call per message,
            // as tokio does).
            if n < buf.len() {
                return;
            }
        }
    }

    fn message(&mut self, token: usize, message: &[u8]) {
        let Some(conn) = self.conns.slots[token].as_mut() else {
            return;
        };
        let Some((room, _)) = conn.member else {
            let room = u32::from_le_bytes(message[16..20].try_into().expect("4 bytes")) as usize;
            let role = usize::from(message[12]);
            if room >= MAX_ROOM || role > 64 {
                return self.close(token);
            }
            conn.member = Some((room, role));
            if self.rooms.len() <= room {
                self.rooms.resize(room + 1, Vec::new());
            }
            let members = &mut self.rooms[room];
            if members.len() <= role {
                members.resize(role + 1, NOBODY);
            }
            members[role] = token;
            // The answer to a hello tells the generator that its room is set up.
            return self.conns.send(token, &[0; MOVED_LEN]);
        };
        let mut moved = [0u8; MOVED_LEN];
        moved[..HEADER_LEN].copy_from_slice(&message[..HEADER_LEN]);
        for &member in &self.rooms[room] {
            if member != NOBODY {
                self.conns.send(member, &moved);
            }
        }
    }

    fn close(&mut self, token: usize) {
        let Some(mut conn) = self.conns.slots[token].take() else {
            return;
        };
        // Deregistering can only fail for a socket that is not registered; it is dropped either way.
        let _ = self.poll.registry().deregister(&mut conn.stream);
        if let Some((room, role)) = conn.member {
            self.rooms[room][role] = NOBODY;
        }
    }
}

/// The child process: one listener per thread, their addresses on stdout, then counters on request.
fn server_main(args: &ServerArgs) -> Result<()> {
    let counters = Arc::new(Counters::default());
    let mut stdout = io::stdout().lock();
    for _ in 0..args.server_threads.max(1) {
        let socket = Socket::new(Domain::IPV4, Type::STREAM, None)?;
        // Options set on the listener are inherited by accepted sockets before their handshake: the receive
        // buffer's size decides the window scale offered in the SYN-ACK.
        args.socket.apply(SockRef::from(&socket))?;
        socket.set_reuse_address(true)?;
        socket.bind(&SocketAddr::from(([127, 0, 0, 1], 0)).into())?;
        socket.listen(4096)?;
        socket.set_nonblocking(true)?;
        let listener = TcpListener::from_std(socket.into());
        writeln!(stdout, "listen {}", listener.local_addr()?)?;
        let server = Server::new(listener, args.clone())?;
        let counters = Arc::clone(&counters);
        thread::spawn(move || server.run(&counters).expect("server thread"));
    }
    writeln!(stdout, "ready")?;
    stdout.flush()?;
    for line in io::stdin().lock().lines() {
        if line? == "stats" {
            let [reads, writes, waits, blocked] = counters.snapshot();
            writeln!(stdout, "stats {reads} {writes} {waits} {blocked}")?;
            stdout.flush()?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------------------------
// The generator

/// One generator connection: a player or a spectator of one room.
struct GenConn {
    stream: TcpStream,
    /// The room's index in its thread's list.
    room: usize,
    role: usize,
    /// The sequence number of the next announcement this connection should get.
    expected: u32,
    partial: Vec<u8>,
    /// A move the socket did not take at once.
    out: Vec<u8>,
}

/// One room as its generator thread plays it.
struct GenRoom {
    id: u32,
    /// The room's connections (tokens in its thread), players first.
    members: Vec<usize>,
    /// The next move's sequence number; player `seq % 2` makes it.
    seq: u32,
    /// When the next move is due.
    due: Instant,
    /// The next mover has seen the previous move.
    seen: bool,
    /// The next move is due but its mover has not seen the previous one yet: it goes as soon as they do.
    waiting: bool,
}

/// The timing every generator thread shares.
#[derive(Clone, Copy)]
struct Clock {
    epoch: Instant,
    period: Duration,
    /// The measured window, in nanoseconds since `epoch`: moves sent in it are counted and timed.
    window: (u64, u64),
    stop: Instant,
}

impl Clock {
    fn nanos(&self, now: Instant) -> u64 {
        u64::try_from(now.duration_since(self.epoch).as_nanos()).unwrap_or(u64::MAX)
    }

    fn in_window(&self, nanos: u64) -> bool {
        (self.window.0..self.window.1).contains(&nanos)
    }
}

/// What a generator thread measured in the window.
#[derive(Default)]
struct GenResult {
    sent: u64,
    /// Move -> opponent latencies, µs.
    opponent: Vec<u32>,
    /// Move -> spectator latencies, µs.
    spectator: Vec<u32>,
    /// Announcements that did not carry the sequence number their connection expected.
    out_of_order: u64,
}

struct Generator {
    poll: Poll,
    conns: Vec<GenConn>,
    rooms: Vec<GenRoom>,
    timers: BinaryHeap<Reverse<(Instant, usize)>>,
    clock: Clock,
    tally: Tally,
    result: GenResult,
}

impl Generator {
    fn run(mut self, counters: &Counters) -> io::Result<GenResult> {
        let mut events = Events::with_capacity(1024);
        let mut buf = vec![0u8; 4096];
        loop {
            let now = Instant::now();
            while let Some(&Reverse((due, room))) = self.timers.peek() {
                if due > now {
                    break;
                }
                self.timers.pop();
                if self.rooms[room].seen {
                    self.play(room, now);
                } else {
                    self.rooms[room].waiting = true;
                }
            }
            if now >= self.clock.stop {
                counters.add(&mut self.tally);
                return Ok(self.result);
            }
            let next = self
                .timers
                .peek()
                .map_or(self.clock.stop, |t| t.0.0)
                .min(self.clock.stop);
            self.poll
                .poll(&mut events, Some(next.saturating_duration_since(now)))?;
            self.tally.waits += 1;
            for event in &events {
                let token = event.token().0;
                if event.is_writable() {
                    self.flush(token);
                }
                if event.is_readable() {
                    self.read(token, &mut buf);
                }
            }
            counters.add(&mut self.tally);
        }
    }

    /// The room's next player moves.
    fn play(&mut self, index: usize, now: Instant) {
        let room = &mut self.rooms[index];
        let mover = room.seq % 2;
        let nanos = self.clock.nanos(now);
        let mut message = [0u8; MOVE_LEN];
        message[..8].copy_from_slice(&nanos.to_le_bytes());
        message[8..12].copy_from_slice(&room.seq.to_le_bytes());
        message[12] = mover as u8;
        message[16..20].copy_from_slice(&room.id.to_le_bytes());
        room.seq += 1;
        room.seen = false;
        room.waiting = false;
        room.due += self.clock.period;
        if room.due <= now {
            // Late by a period or more: no burst to catch up, the rate falls instead.
            room.due = now + self.clock.period;
        }
        self.timers.push(Reverse((room.due, index)));
        if self.clock.in_window(nanos) {
            self.result.sent += 1;
        }
        let token = room.members[mover as usize];
        let conn = &mut self.conns[token];
        if !conn.out.is_empty() {
            conn.out.extend_from_slice(&message);
            return;
        }
        self.tally.writes += 1;
        match conn.stream.write(&message) {
            Ok(n) if n == MOVE_LEN => {}
            Ok(n) => conn.out.extend_from_slice(&message[n..]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => conn.out.extend_from_slice(&message),
            Err(e) => panic!("a move could not be sent: {e}"),
        }
    }

    fn flush(&mut self, token: usize) {
        let conn = &mut self.conns[token];
        while !conn.out.is_empty() {
            self.tally.writes += 1;
            match conn.stream.write(&conn.out) {
                Ok(n) => {
                    conn.out.drain(..n);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) => panic!("a move could not be sent: {e}"),
            }
        }
    }

    fn read(&mut self, token: usize, buf: &mut [u8]) {
        loop {
            self.tally.reads += 1;
            let n = match self.conns[token].stream.read(buf) {
                Ok(0) => panic!("the server closed a connection"),
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => panic!("a read failed: {e}"),
            };
            let now = Instant::now();
            let mut partial = std::mem::take(&mut self.conns[token].partial);
            partial.extend_from_slice(&buf[..n]);
            let whole = partial.len() / MOVED_LEN * MOVED_LEN;
            for message in partial[..whole].chunks_exact(MOVED_LEN) {
                self.moved(token, message, now);
            }
            partial.drain(..whole);
            self.conns[token].partial = partial;
            if n < buf.len() {
                return;
            }
        }
    }

    /// A move's announcement reached one member of its room.
    fn moved(&mut self, token: usize, message: &[u8], now: Instant) {
        let sent = u64::from_le_bytes(message[..8].try_into().expect("8 bytes"));
        let seq = u32::from_le_bytes(message[8..12].try_into().expect("4 bytes"));
        let mover = usize::from(message[12]);
        let conn = &mut self.conns[token];
        if seq != conn.expected {
            self.result.out_of_order += 1;
        }
        conn.expected = seq.wrapping_add(1);
        let (index, role) = (conn.room, conn.role);
        if self.clock.in_window(sent) {
            let micros = u32::try_from(self.clock.nanos(now).saturating_sub(sent) / 1000)
                .unwrap_or(u32::MAX);
            if role >= 2 {
                self.result.spectator.push(micros);
            } else if role != mover {
                self.result.opponent.push(micros);
            }
        }
        let room = &mut self.rooms[index];
        if role == (room.seq % 2) as usize && seq.wrapping_add(1) == room.seq {
            room.seen = true;
            if room.waiting {
                self.play(index, now);
            }
        }
    }
}

/// One connection of the generator, set up: hello sent, answer read, then non-blocking.
fn connect(addr: SocketAddr, opts: &SocketOpts, room: u32, role: usize) -> Result<TcpStream> {
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    opts.apply(SockRef::from(&socket))?;
    socket
        .connect(&addr.into())
        .with_context(|| format!("connecting to {addr}"))?;
    let mut stream: std::net::TcpStream = socket.into();
    let mut hello = [0u8; MOVE_LEN];
    hello[12] = u8::try_from(role).context("too many spectators")?;
    hello[16..20].copy_from_slice(&room.to_le_bytes());
    stream.write_all(&hello)?;
    let mut answer = [0u8; MOVED_LEN];
    stream
        .read_exact(&mut answer)
        .context("the server did not answer a hello")?;
    stream.set_nonblocking(true)?;
    Ok(TcpStream::from_std(stream))
}

/// The server child: its stdin asks for counters, its stdout answers.
struct ServerChild {
    child: std::process::Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl ServerChild {
    fn start(args: &ServerArgs) -> Result<(Self, Vec<SocketAddr>)> {
        let mut command = Command::new(std::env::current_exe()?);
        command.args([
            "server",
            "--server-threads",
            &args.server_threads.to_string(),
        ]);
        if args.batch {
            command.arg("--batch");
        }
        if args.spin {
            command.arg("--spin");
        }
        command.args(args.socket.to_args());
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take().context("no stdin")?;
        let mut stdout = BufReader::new(child.stdout.take().context("no stdout")?);
        let mut addrs = Vec::new();
        loop {
            let mut line = String::new();
            if stdout.read_line(&mut line)? == 0 {
                bail!("the server ended before it was ready");
            }
            match line.trim().split_once(' ') {
                Some(("listen", addr)) => addrs.push(addr.parse()?),
                _ if line.trim() == "ready" => break,
                _ => bail!("unexpected line from the server: {line:?}"),
            }
        }
        Ok((
            ServerChild {
                child,
                stdin,
                stdout,
            },
            addrs,
        ))
    }

    fn stats(&mut self) -> Result<[u64; 4]> {
        writeln!(self.stdin, "stats")?;
        let mut line = String::new();
        self.stdout.read_line(&mut line)?;
        let numbers: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(str::parse)
            .collect::<Result<_, _>>()
            .context("stats line")?;
        numbers
            .try_into()
            .map_err(|_| anyhow::anyhow!("stats line: {line:?}"))
    }
}

/// A process's CPU and context switches at one moment, from `/proc`.
#[derive(Clone, Copy, Default)]
struct ProcSample {
    user: Duration,
    system: Duration,
    voluntary: u64,
    involuntary: u64,
}

impl ProcSample {
    fn read(pid: u32) -> Result<Self> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
        // The command name (field 2) may hold spaces; the fields after it are numbers.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .context("/proc stat")?
            .1
            .split_whitespace()
            .collect();
        let ticks = clock_ticks();
        let tick = |i: usize| -> Result<Duration> {
            let n: u64 = fields.get(i).context("/proc stat field")?.parse()?;
            Ok(Duration::from_micros(n * 1_000_000 / ticks))
        };
        let mut sample = ProcSample {
            user: tick(11)?,
            system: tick(12)?,
            ..ProcSample::default()
        };
        // Context switches are counted per thread.
        for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
            let status = std::fs::read_to_string(task?.path().join("status"))?;
            for line in status.lines() {
                let count = |name: &str| {
                    line.strip_prefix(name)
                        .and_then(|v| v.trim().parse::<u64>().ok())
                };
                if let Some(n) = count("voluntary_ctxt_switches:") {
                    sample.voluntary += n;
                } else if let Some(n) = count("nonvoluntary_ctxt_switches:") {
                    sample.involuntary += n;
                }
            }
        }
        Ok(sample)
    }
}

/// Clock ticks per second, the unit of `/proc/PID/stat`'s times.
fn clock_ticks() -> u64 {
    // SAFETY: sysconf reads a configuration value and touches no memory of ours.
    #[allow(unsafe_code)]
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks).ok().filter(|&t| t > 0).unwrap_or(100)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// The value at `fraction` of sorted samples, in ms.
fn percentile(sorted: &[u32], fraction: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 * fraction) as usize).min(sorted.len() - 1);
    f64::from(sorted[i]) / 1000.0
}

fn run(args: &RunArgs) -> Result<()> {
    if args.rooms == 0 || args.gen_threads == 0 || args.server.server_threads == 0 {
        bail!("--rooms, --gen-threads and --server-threads must be at least 1");
    }
    let (mut server, addrs) = ServerChild::start(&args.server)?;
    let server_pid = server.child.id();
    let setup = Instant::now();
    let mut generators = Vec::new();
    for _ in 0..args.gen_threads {
        generators.push((Poll::new()?, Vec::new(), Vec::new()));
    }
    let members = 2 + args.spectators;
    for room in 0..args.rooms {
        let (poll, conns, rooms): &mut (Poll, Vec<GenConn>, Vec<GenRoom>) =
            &mut generators[room % args.gen_threads];
        let id = u32::try_from(room)?;
        let mut tokens = Vec::new();
        for role in 0..members {
            let mut stream = connect(addrs[room % addrs.len()], &args.server.socket, id, role)?;
            let token = conns.len();
            poll.registry().register(
                &mut stream,
                Token(token),
                Interest::READABLE | Interest::WRITABLE,
            )?;
            conns.push(GenConn {
                stream,
                room: rooms.len(),
                role,
                expected: 0,
                partial: Vec::new(),
                out: Vec::new(),
            });
            tokens.push(token);
        }
        rooms.push(GenRoom {
            id,
            members: tokens,
            seq: 0,
            due: setup,
            seen: true,
            waiting: false,
        });
    }
    println!(
        "{} rooms x {members} = {} connections set up in {:.1} s",
        args.rooms,
        args.rooms * members,
        setup.elapsed().as_secs_f64()
    );

    let epoch = Instant::now();
    let start = epoch + Duration::from_millis(100);
    let window_start = start + args.warmup;
    let window_end = window_start + args.duration;
    let mut clock = Clock {
        epoch,
        period: args.move_every,
        window: (0, 0),
        stop: window_end + GRACE,
    };
    clock.window = (clock.nanos(window_start), clock.nanos(window_end));
    let counters = Arc::new(Counters::default());
    let mut handles = Vec::new();
    for (poll, conns, mut rooms) in generators {
        for room in &mut rooms {
            // Staggered: room N's first move at N/rooms of the first period.
            room.due = start
                + args
                    .move_every
                    .mul_f64(f64::from(room.id) / args.rooms as f64);
        }
        let timers = rooms
            .iter()
            .enumerate()
            .map(|(i, r)| Reverse((r.due, i)))
            .collect();
        let generator = Generator {
            poll,
            conns,
            rooms,
            timers,
            clock,
            tally: Tally::default(),
            result: GenResult::default(),
        };
        let counters = Arc::clone(&counters);
        handles.push(thread::spawn(move || generator.run(&counters)));
    }

    thread::sleep(window_start.saturating_duration_since(Instant::now()));
    let load_before = load_average();
    let (gen0, srv0) = (
        ProcSample::read(std::process::id())?,
        ProcSample::read(server_pid)?,
    );
    let (gen_stats0, srv_stats0) = (counters.snapshot(), server.stats()?);
    thread::sleep(window_end.saturating_duration_since(Instant::now()));
    let (gen1, srv1) = (
        ProcSample::read(std::process::id())?,
        ProcSample::read(server_pid)?,
    );
    let (gen_stats1, srv_stats1) = (counters.snapshot(), server.stats()?);
    let load_after = load_average();

    let mut total = GenResult::default();
    for handle in handles {
        let result = handle
            .join()
            .map_err(|_| anyhow::anyhow!("a generator thread panicked"))??;
        total.sent += result.sent;
        total.opponent.extend(result.opponent);
        total.spectator.extend(result.spectator);
        total.out_of_order += result.out_of_order;
    }
    drop(server.stdin);
    server.child.wait()?;

    let seconds = args.duration.as_secs_f64();
    let moves = total.sent.max(1) as f64;
    let offered = args.rooms as f64 / args.move_every.as_secs_f64();
    total.opponent.sort_unstable();
    total.spectator.sort_unstable();
    let lost_opponent = total.sent.saturating_sub(total.opponent.len() as u64);
    let lost_spectator =
        (total.sent * args.spectators as u64).saturating_sub(total.spectator.len() as u64);
    let per_move = |a: Duration, b: Duration| (a.as_secs_f64() - b.as_secs_f64()) * 1e6 / moves;
    let cores = |a: Duration, b: Duration| (a.as_secs_f64() - b.as_secs_f64()) / seconds;
    let count = |a: u64, b: u64| (a - b) as f64 / moves;
    println!(
        "options: server threads {}, generator threads {}, nodelay {}, batch {}, spin {}, sndbuf {:?}, rcvbuf {:?}",
        args.server.server_threads,
        args.gen_threads,
        args.server.socket.nodelay,
        args.server.batch,
        args.server.spin,
        args.server.socket.sndbuf,
        args.server.socket.rcvbuf
    );
    println!("load average {load_before} -> {load_after}");
    println!(
        "moves: offered {offered:.0}/s, carried {:.0}/s ({} in {seconds:.0} s); lost to opponent {lost_opponent}, \
         to spectators {lost_spectator}; out of order {}",
        total.sent as f64 / seconds,
        total.sent,
        total.out_of_order
    );
    let (o, s) = (&total.opponent, &total.spectator);
    println!(
        "move -> opponent p50 / p90 / p99 / max {:.2} / {:.2} / {:.2} / {:.2} ms; -> spectator p50 / p99 {:.2} / {:.2} ms",
        percentile(o, 0.5),
        percentile(o, 0.9),
        percentile(o, 0.99),
        percentile(o, 1.0),
        percentile(s, 0.5),
        percentile(s, 0.99)
    );
    for (name, a, b, c1, c0) in [
        ("server", srv1, srv0, srv_stats1, srv_stats0),
        ("generator", gen1, gen0, gen_stats1, gen_stats0),
    ] {
        println!(
            "{name}: {:.2} + {:.2} cores (user + system); per move {:.1} user + {:.1} system = {:.1} µs; \
             per move {:.2} reads, {:.2} writes, {:.3} epoll_wait, {:.3} short writes, {:.3} + {:.3} context switches (voluntary + not)",
            cores(a.user, b.user),
            cores(a.system, b.system),
            per_move(a.user, b.user),
            per_move(a.system, b.system),
            per_move(a.user + a.system, b.user + b.system),
            count(c1[0], c0[0]),
            count(c1[1], c0[1]),
            count(c1[2], c0[2]),
            count(c1[3], c0[3]),
            count(a.voluntary, b.voluntary),
            count(a.involuntary, b.involuntary),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_their_unit() {
        assert_eq!(parse_duration("100ms"), Ok(Duration::from_millis(100)));
        assert_eq!(parse_duration("25s"), Ok(Duration::from_secs(25)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("100").is_err());
        assert!(parse_duration("ms").is_err());
        assert!(parse_duration("5h").is_err());
    }

    /// A move reaches every member of its room, the mover included, with its header, and no other room.
    #[test]
    fn the_server_sends_a_move_to_each_member_of_its_room() {
        let args = ServerArgs {
            server_threads: 1,
            batch: false,
            spin: false,
            socket: SocketOpts {
                nodelay: true,
                sndbuf: None,
                rcvbuf: None,
            },
        };
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
        let addr = listener.local_addr().unwrap();
        let server = Server::new(listener, args.clone()).unwrap();
        thread::spawn(move || server.run(&Counters::default()));
        let mut room: Vec<std::net::TcpStream> = Vec::new();
        for (id, roles) in [(7, 4), (8, 2)] {
            for role in 0..roles {
                let stream = connect(addr, &args.socket, id, role).unwrap();
                let stream = std::net::TcpStream::from(std::os::fd::OwnedFd::from(stream));
                stream.set_nonblocking(false).unwrap();
                room.push(stream);
            }
        }
        let mut message = [0u8; MOVE_LEN];
        message[..8].copy_from_slice(&12345u64.to_le_bytes());
        message[8..12].copy_from_slice(&3u32.to_le_bytes());
        message[12] = 1;
        message[16..20].copy_from_slice(&7u32.to_le_bytes());
        room[1].write_all(&message).unwrap();
        for member in &mut room[..4] {
            let mut moved = [0u8; MOVED_LEN];
            member.read_exact(&mut moved).unwrap();
            assert_eq!(moved[..HEADER_LEN], message[..HEADER_LEN]);
        }
        // Room 8 heard nothing: its next message is the answer to its own move.
        message[16..20].copy_from_slice(&8u32.to_le_bytes());
        message[8..12].copy_from_slice(&9u32.to_le_bytes());
        room[4].write_all(&message).unwrap();
        for member in &mut room[4..] {
            let mut moved = [0u8; MOVED_LEN];
            member.read_exact(&mut moved).unwrap();
            assert_eq!(moved[8..12], 9u32.to_le_bytes());
        }
    }
}
