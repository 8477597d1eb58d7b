//! A 3-byte protocol client for the arena's tests, which writes down every
//! frame the referee sends it.
//!
//! `arena-fake-client MODE ARG LOG HOST PORT` connects, says Connect and
//! Ready, and appends one line per frame received to the file `LOG`
//! (`connect SEAT`, `update TURN DATA`, `end RESULT DATA`, with the frame's
//! bytes in decimal), exiting after End or when the connection closes. It
//! plays the first empty point from the centre outwards, except as `MODE`
//! says: `good` never misbehaves, `late MS` answers MS milliseconds late,
//! `hang` never answers.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use omok::frame::{EndResult, FRAME_LEN, PlayerMsg, RefereeMsg};
use renju::{Game, Point, Rule};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, arg, log, host, port] = args.as_slice() else {
        eprintln!("usage: arena-fake-client MODE ARG LOG HOST PORT");
        std::process::exit(2);
    };
    let delay = Duration::from_millis(arg.parse().unwrap_or(0));
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("the log file opens");
    let mut socket = TcpStream::connect(format!("{host}:{port}")).expect("the referee listens");
    let send = |socket: &mut TcpStream, msg: PlayerMsg| socket.write_all(&msg.encode()).is_ok();
    if !send(&mut socket, PlayerMsg::Connect) || !send(&mut socket, PlayerMsg::Ready(true)) {
        return;
    }
    // The rule does not matter to these tests: freestyle knows only
    // occupied points.
    let mut game = Game::new(Rule::Freestyle);
    // The first Update of a game is the start signal, not a stone.
    let mut started = false;
    let mut frame = [0u8; FRAME_LEN];
    while socket.read_exact(&mut frame).is_ok() {
        let line = match RefereeMsg::decode(frame) {
            Ok(RefereeMsg::Connect { seat, .. }) => format!("connect {seat}"),
            Ok(RefereeMsg::Update { your_turn, data }) => {
                if std::mem::replace(&mut started, true)
                    && let Some(p) = Point::from_byte(data)
                {
                    let _ = game.play(p);
                }
                if your_turn && mode != "hang" {
                    std::thread::sleep(delay);
                    let mine = Point::all()
                        .filter(|&p| game.check(p).is_ok())
                        .min_by_key(|p| {
                            let d = |v: usize| (v as i32 - 7).abs();
                            (d(p.x()).max(d(p.y())), p.index())
                        });
                    if let Some(p) = mine {
                        send(&mut socket, PlayerMsg::Put(p.to_byte()));
                    }
                }
                format!("update {} {data}", u8::from(!your_turn))
            }
            Ok(RefereeMsg::End { result, data }) => {
                let result = match result {
                    EndResult::Lost => 0,
                    EndResult::Won => 1,
                    EndResult::Draw => 2,
                };
                format!("end {result} {data}")
            }
            Err(e) => format!("invalid {e}"),
        };
        let _ = writeln!(log, "{line}");
        if line.starts_with("end") {
            return;
        }
    }
}
