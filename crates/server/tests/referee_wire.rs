//! An independent check of the referee port against `omok-wire.md`, byte
//! for byte, written from the document alone: seating and colours, every
//! frame kind, frames split and merged, timeouts, illegal moves (off the
//! board, occupied, out of turn, forbidden), unknown commands and invalid
//! frames, disconnects before and during a game, and the end of a game.
//! Every script runs against the referee port of `madang serve` and
//! against `madang omok serve`'s referee (`omok_net::server::Referee`),
//! which must answer alike.

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use omok_net::server::{Referee, RefereeConfig};
use renju::Rule;
use server::Config;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The two referees the document describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// `madang serve`'s referee port.
    Serve,
    /// `madang omok serve`.
    OmokServe,
}

const TARGETS: [Target; 2] = [Target::OmokServe, Target::Serve];

/// A referee of `target` on loopback, Renju, with `turn_time` per move.
async fn referee(target: Target, turn_time: Duration) -> SocketAddr {
    match target {
        Target::Serve => {
            let s = support::ws::start(Config {
                referee_rule: Rule::Renju,
                referee_turn_time: turn_time,
                ..Config::default()
            })
            .await;
            s.referee
        }
        Target::OmokServe => {
            let config = RefereeConfig {
                rule: Rule::Renju,
                turn_time,
                ..RefereeConfig::default()
            };
            let referee = Referee::bind("127.0.0.1:0".parse().unwrap(), config)
                .await
                .unwrap();
            let addr = referee.local_addr();
            tokio::spawn(referee.run());
            addr
        }
    }
}

/// The turn time of scripts that do not wait for it.
const LONG: Duration = Duration::from_secs(60);

/// A point's byte: column `x`, row `y`, both from 0.
fn p(x: u8, y: u8) -> u8 {
    (x << 4) | y
}

/// A program: a raw TCP connection.
struct Bot(TcpStream, Target);

impl Bot {
    async fn connect(addr: SocketAddr, target: Target) -> Bot {
        Bot(TcpStream::connect(addr).await.unwrap(), target)
    }

    async fn send(&mut self, frame: [u8; 3]) {
        self.0.write_all(&frame).await.unwrap();
    }

    /// The next frame, within 10 s; `None` if the referee closed first.
    async fn recv(&mut self) -> Option<[u8; 3]> {
        let mut frame = [0; 3];
        let read = tokio::time::timeout(Duration::from_secs(10), self.0.read_exact(&mut frame))
            .await
            .unwrap_or_else(|_| panic!("{:?}: no frame in 10 s", self.1));
        read.ok().map(|_| frame)
    }

    async fn expect(&mut self, want: [u8; 3], what: &str) {
        let got = self.recv().await;
        assert_eq!(got, Some(want), "{:?}: {what}", self.1);
    }

    /// The referee closes the connection, sending nothing more.
    async fn expect_closed(&mut self, what: &str) {
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), self.0.read_to_end(&mut rest))
            .await
            .unwrap_or_else(|_| panic!("{:?}: not closed in 10 s: {what}", self.1));
        // A reset after everything was read is a close too.
        let _ = read;
        assert_eq!(rest, b"", "{:?}: nothing after {what}", self.1);
    }

    /// Connects and is seated: the reply `[0, seat, 1]`.
    async fn seated(addr: SocketAddr, target: Target, seat: u8) -> Bot {
        let mut bot = Bot::connect(addr, target).await;
        bot.send([0, 0, 0]).await;
        bot.expect([0, seat, 1], "seated").await;
        bot
    }
}

/// Black and white seated, ready, and told the game started.
async fn started(addr: SocketAddr, target: Target) -> (Bot, Bot) {
    let mut black = Bot::seated(addr, target, 0).await;
    let mut white = Bot::seated(addr, target, 1).await;
    black.send([1, 0, 1]).await;
    white.send([1, 0, 1]).await;
    black.expect([2, 0, 0], "start: black's turn").await;
    white.expect([2, 1, 0], "start: the opponent's turn").await;
    (black, white)
}

/// `mover` places `point`; both are told (the mover's copy acknowledges).
async fn put(mover: &mut Bot, other: &mut Bot, point: u8) {
    mover.send([3, 0, point]).await;
    mover.expect([2, 1, point], "the move acknowledged").await;
    other.expect([2, 0, point], "the move, and your turn").await;
}

/// The game ended: `[4, 1, data]` to the winner, `[4, 0, data]` to the
/// loser, then both are closed.
async fn ended(winner: &mut Bot, loser: &mut Bot, data: u8, what: &str) {
    winner.expect([4, 1, data], what).await;
    loser.expect([4, 0, data], what).await;
    winner.expect_closed("End").await;
    loser.expect_closed("End").await;
}

#[tokio::test]
async fn a_game_to_five_frame_by_frame() {
    for target in TARGETS {
        let addr = referee(target, LONG).await;
        let (mut black, mut white) = started(addr, target).await;
        for x in 3..7 {
            put(&mut black, &mut white, p(x, 7)).await;
            put(&mut white, &mut black, p(x, 9)).await;
        }
        black.send([3, 0, p(7, 7)]).await;
        ended(&mut black, &mut white, p(7, 7), "black's five").await;
    }
}

/// "Black making exactly five wins even if the same stone would otherwise
/// be forbidden": h8 completes d8-h8 and makes two fours (h4 h5 h6 . h8,
/// e5 f6 g7 h8), a double-four.
#[tokio::test]
async fn blacks_five_wins_though_the_stone_also_makes_a_double_four() {
    let black_stones = [
        p(6, 6),
        p(4, 4),
        p(5, 5),
        p(7, 3),
        p(7, 4),
        p(7, 5),
        p(3, 7),
        p(4, 7),
        p(6, 7),
        p(5, 7),
    ];
    let white_stones = [0, 2, 4, 6, 8, 10, 12, 14]
        .map(|y| p(0, y))
        .into_iter()
        .chain([p(14, 0), p(14, 2)]);
    for target in TARGETS {
        let addr = referee(target, LONG).await;
        let (mut black, mut white) = started(addr, target).await;
        for (b, w) in black_stones.iter().zip(white_stones.clone()) {
            put(&mut black, &mut white, *b).await;
            put(&mut white, &mut black, w).await;
        }
        black.send([3, 0, p(7, 7)]).await;
        ended(&mut black, &mut white, p(7, 7), "five with a double-four").await;
    }
}

#[tokio::test]
async fn frames_split_across_reads_and_merged_in_one_are_read_alike() {
    for target in TARGETS {
        let addr = referee(target, LONG).await;
        // Connect and Ready in one write.
        let mut black = Bot::connect(addr, target).await;
        black.0.write_all(&[0, 0, 0, 1, 0, 1]).await.unwrap();
        black.expect([0, 0, 1], "seated black").await;
        let mut white = Bot::connect(addr, target).await;
        white.0.write_all(&[0, 0]).await.unwrap();
        white.0.flush().await.unwrap();
        white.0.write_all(&[0, 1]).await.unwrap();
        white.expect([0, 1, 1], "seated white").await;
        white.0.write_all(&[0, 1]).await.unwrap();
        black.expect([2, 0, 0], "start").await;
        white.expect([2, 1, 0], "start").await;
        // A Put byte by byte.
        for b in [3, 0, p(7, 7)] {
            black.0.write_all(&[b]).await.unwrap();
            black.0.flush().await.unwrap();
        }
        black.expect([2, 1, p(7, 7)], "acknowledged").await;
        white.expect([2, 0, p(7, 7)], "your turn").await;
    }
}

#[tokio::test]
async fn the_player_to_move_past_the_turn_time_loses_on_time() {
    for target in TARGETS {
        let addr = referee(target, Duration::from_millis(300)).await;
        let (mut black, mut white) = started(addr, target).await;
        put(&mut black, &mut white, p(7, 7)).await;
        // White says nothing.
        ended(&mut black, &mut white, 1, "white's time ran out").await;
    }
}

#[tokio::test]
async fn a_put_half_received_at_the_limit_is_a_timeout() {
    for target in TARGETS {
        let addr = referee(target, Duration::from_millis(300)).await;
        let (mut black, mut white) = started(addr, target).await;
        black.0.write_all(&[3, 0]).await.unwrap();
        ended(
            &mut white,
            &mut black,
            1,
            "two bytes of a Put, then nothing",
        )
        .await;
    }
}

#[tokio::test]
async fn an_illegal_put_loses_with_an_error() {
    type Script = fn(u8) -> (Vec<u8>, Vec<u8>);
    // (black's points, white's points); the last point is the illegal one,
    // by black when black has one more point, else by white.
    let scripts: [(&str, Script); 4] = [
        ("off the board (x = 15)", |_| (vec![0xf0], vec![])),
        ("off the board (y = 15)", |_| (vec![0x0f], vec![])),
        ("occupied", |_| (vec![p(7, 7)], vec![p(7, 7)])),
        ("forbidden: a double-three", |_| {
            (
                vec![p(5, 7), p(6, 7), p(7, 5), p(7, 6), p(7, 7)],
                vec![p(0, 0), p(0, 14), p(14, 0), p(14, 14)],
            )
        }),
    ];
    for target in TARGETS {
        for (what, script) in scripts {
            let addr = referee(target, LONG).await;
            let (mut black, mut white) = started(addr, target).await;
            let (b, w) = script(0);
            let black_errs = b.len() > w.len();
            let moves = b.len() + w.len();
            for i in 0..moves - 1 {
                if i % 2 == 0 {
                    put(&mut black, &mut white, b[i / 2]).await;
                } else {
                    put(&mut white, &mut black, w[i / 2]).await;
                }
            }
            if black_errs {
                black.send([3, 0, *b.last().unwrap()]).await;
                ended(&mut white, &mut black, 0, what).await;
            } else {
                white.send([3, 0, *w.last().unwrap()]).await;
                ended(&mut black, &mut white, 0, what).await;
            }
        }
    }
}

#[tokio::test]
async fn out_of_turn_unknown_commands_and_invalid_frames_lose_in_a_game() {
    for target in TARGETS {
        // White puts before its turn.
        let addr = referee(target, LONG).await;
        let (mut black, mut white) = started(addr, target).await;
        white.send([3, 0, p(7, 7)]).await;
        ended(&mut black, &mut white, 0, "out of turn").await;
        // An unknown command.
        let addr = referee(target, LONG).await;
        let (mut black, mut white) = started(addr, target).await;
        black.send([9, 0, 0]).await;
        ended(&mut white, &mut black, 0, "unknown command").await;
        // A valid Ready or Connect in a game is ignored; a Ready with a
        // data byte other than 0 or 1 is an invalid frame.
        let addr = referee(target, LONG).await;
        let (mut black, mut white) = started(addr, target).await;
        black.send([1, 0, 1]).await;
        black.send([0, 0, 0]).await;
        put(&mut black, &mut white, p(7, 7)).await;
        white.send([1, 0, 7]).await;
        ended(&mut black, &mut white, 0, "invalid frame").await;
        // Referee frames sent to the referee are no player messages
        // either (an Update from a player).
        let addr = referee(target, LONG).await;
        let (mut black, mut white) = started(addr, target).await;
        black.send([2, 0, 0]).await;
        ended(
            &mut white,
            &mut black,
            0,
            "a referee's command from a player",
        )
        .await;
    }
}

#[tokio::test]
async fn a_disconnect_or_half_close_in_a_game_loses() {
    for target in TARGETS {
        let addr = referee(target, LONG).await;
        let (black, mut white) = started(addr, target).await;
        drop(black);
        white.expect([4, 1, 0], "the opponent left").await;
        white.expect_closed("End").await;
        // A half-close: the player can still read its End.
        let addr = referee(target, LONG).await;
        let (mut black, mut white) = started(addr, target).await;
        put(&mut black, &mut white, p(7, 7)).await;
        black.0.shutdown().await.unwrap();
        ended(&mut white, &mut black, 0, "black half-closed").await;
    }
}

#[tokio::test]
async fn before_the_start_a_leaver_frees_its_seat_and_colour_and_readiness_stands() {
    for target in TARGETS {
        let addr = referee(target, LONG).await;
        let black = Bot::seated(addr, target, 0).await;
        let mut white = Bot::seated(addr, target, 1).await;
        white.send([1, 0, 1]).await;
        drop(black);
        // The next program takes black, says so, and white's Ready stands.
        let mut next = Bot::connect(addr, target).await;
        // Until the referee saw black go, the newcomer may be refused.
        next.send([0, 0, 0]).await;
        let mut reply = next.recv().await;
        while reply != Some([0, 0, 1]) {
            assert_eq!(reply, Some([0, 2, 2]), "{target:?}: refused or black");
            next = Bot::connect(addr, target).await;
            next.send([0, 0, 0]).await;
            reply = next.recv().await;
        }
        next.send([1, 0, 1]).await;
        next.expect([2, 0, 0], "start: black's turn").await;
        white.expect([2, 1, 0], "start").await;
        put(&mut next, &mut white, p(7, 7)).await;
    }
}

#[tokio::test]
async fn before_the_start_a_put_loses_and_frees_the_seat_and_a_stranger_is_closed_unanswered() {
    for target in TARGETS {
        let addr = referee(target, LONG).await;
        let mut black = Bot::seated(addr, target, 0).await;
        let mut white = Bot::seated(addr, target, 1).await;
        black.send([3, 0, p(7, 7)]).await;
        black.expect([4, 0, 0], "a Put before the start").await;
        black.expect_closed("End").await;
        // White was not told anything and keeps its seat: the next
        // program is black.
        let mut next = Bot::seated(addr, target, 0).await;
        for bot in [&mut next, &mut white] {
            bot.send([1, 0, 1]).await;
        }
        next.expect([2, 0, 0], "start").await;
        white
            .expect([2, 1, 0], "start: white was told nothing before")
            .await;
        // Anything but Connect first: closed with no reply.
        for first in [[1, 0, 1], [3, 0, 0x77], [9, 9, 9]] {
            let mut stranger = Bot::connect(addr, target).await;
            stranger.send(first).await;
            stranger
                .expect_closed("a first frame that is no Connect")
                .await;
        }
    }
}

/// A third program: `madang omok serve` with one table refuses it
/// (`[0, 2, 2]`, closed); `madang serve` seats it black in a room of its
/// own, as `docs/web-protocol.md` says.
#[tokio::test]
async fn a_third_program_is_refused_by_one_table_and_seated_anew_by_the_yard() {
    for target in TARGETS {
        let addr = referee(target, LONG).await;
        let _black = Bot::seated(addr, target, 0).await;
        let _white = Bot::seated(addr, target, 1).await;
        let mut third = Bot::connect(addr, target).await;
        third.send([0, 0, 0]).await;
        match target {
            Target::OmokServe => {
                third.expect([0, 2, 2], "refused").await;
                third.expect_closed("refused").await;
            }
            Target::Serve => third.expect([0, 0, 1], "black in a new room").await,
        }
    }
}
