//! An outside check of the 3-byte referee port of `madang serve`, written
//! from `omok-wire.md` alone (and, for the person's side of the last
//! checks, `docs/web-protocol.md`): the server runs as a process, as an
//! operator starts it, and raw TCP clients check byte for byte what the
//! document says a bot sees. Seating order, the frames of a whole game,
//! every way a game ends (five, illegal moves, bad frames, silence past the
//! turn time, leaving, a full board), two pairs of bots in a row, and bots
//! seated against a person who plays through the WebSocket protocol.

mod support;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

use support::{LIMIT, Serve, hello, send, state_with, until};

/// `madang serve` with `rule` and `turn_time` on its referee port.
async fn start(name: &str, rule: &str, turn_time: &str) -> Serve {
    let extra = ["--referee-rule", rule, "--referee-turn-time", turn_time];
    Serve::start(&format!("referee-{name}"), &extra).await
}

/// A point's byte: column `x`, row `y`, both from 0.
fn p(x: u8, y: u8) -> u8 {
    (x << 4) | y
}

const CONNECT: [u8; 3] = [0, 0, 0];
const READY: [u8; 3] = [1, 0, 1];

fn put_frame(point: u8) -> [u8; 3] {
    [3, 0, point]
}

/// A program: one TCP connection to the referee port.
struct Bot(TcpStream);

impl Bot {
    async fn connect(serve: &Serve) -> Bot {
        Bot(TcpStream::connect(serve.referee).await.unwrap())
    }

    async fn send(&mut self, frame: [u8; 3]) {
        self.0.write_all(&frame).await.unwrap();
    }

    /// The next frame; panics if none comes in time or the referee closed.
    async fn recv(&mut self, what: &str) -> [u8; 3] {
        let mut frame = [0; 3];
        timeout(LIMIT, self.0.read_exact(&mut frame))
            .await
            .unwrap_or_else(|_| panic!("no frame in time: {what}"))
            .unwrap_or_else(|e| panic!("closed before a frame ({e}): {what}"));
        frame
    }

    async fn expect(&mut self, want: [u8; 3], what: &str) {
        assert_eq!(self.recv(what).await, want, "{what}");
    }

    /// The referee sends nothing more and closes (its sending side at
    /// least: the document has it shut down at once, then linger).
    async fn expect_closed(&mut self, what: &str) {
        let mut rest = Vec::new();
        let read = timeout(LIMIT, self.0.read_to_end(&mut rest))
            .await
            .unwrap_or_else(|_| panic!("not closed in time: {what}"));
        assert!(read.is_ok(), "{what}: the End is not lost to a reset");
        assert_eq!(rest, b"", "nothing after {what}");
    }

    /// Connects, sends Connect, and is told `[0, seat, 1]`.
    async fn seated(serve: &Serve, seat: u8) -> Bot {
        let mut bot = Bot::connect(serve).await;
        bot.send(CONNECT).await;
        bot.expect([0, seat, 1], "seated").await;
        bot
    }
}

/// Two programs seated and ready: the start Update to each.
async fn started(serve: &Serve) -> (Bot, Bot) {
    let mut black = Bot::seated(serve, 0).await;
    let mut white = Bot::seated(serve, 1).await;
    black.send(READY).await;
    white.send(READY).await;
    black.expect([2, 0, 0], "start: your turn").await;
    white.expect([2, 1, 0], "start: the opponent's turn").await;
    (black, white)
}

/// `mover` puts `point`: the mover's copy `[2, 1, p]`, the other's
/// `[2, 0, p]`.
async fn put(mover: &mut Bot, other: &mut Bot, point: u8) {
    mover.send(put_frame(point)).await;
    mover
        .expect([2, 1, point], "the mover's acknowledgement")
        .await;
    other.expect([2, 0, point], "the move, and your turn").await;
}

/// Plays `black` and `white` alternately from black (`black` one longer or
/// as long).
async fn play(b: &mut Bot, w: &mut Bot, black: &[u8], white: &[u8]) {
    for (i, &point) in black.iter().enumerate() {
        put(b, w, point).await;
        if let Some(&point) = white.get(i) {
            put(w, b, point).await;
        }
    }
}

/// End `[4, 1, data]` to the winner and `[4, 0, data]` to the loser, then
/// both are closed.
async fn ended(winner: &mut Bot, loser: &mut Bot, data: u8, what: &str) {
    winner.expect([4, 1, data], what).await;
    loser.expect([4, 0, data], what).await;
    winner.expect_closed(what).await;
    loser.expect_closed(what).await;
}

/// White's four corners: moves that threaten nothing.
const CORNERS: [u8; 4] = [0x00, 0x0e, 0xe0, 0xee];

#[tokio::test]
async fn the_first_connect_frame_not_the_first_connection_is_black() {
    let serve = start("order", "renju", "60s").await;
    let mut early = Bot::connect(&serve).await;
    let mut late = Bot::connect(&serve).await;
    late.send(CONNECT).await;
    late.expect([0, 0, 1], "the first Connect is black").await;
    early.send(CONNECT).await;
    early.expect([0, 1, 1], "the second is white").await;
    // Nothing answers Ready: the next frame of each is the start.
    early.send(READY).await;
    late.send(READY).await;
    late.expect([2, 0, 0], "black starts").await;
    early.expect([2, 1, 0], "white waits").await;
    put(&mut late, &mut early, p(7, 7)).await;
}

#[tokio::test]
async fn a_game_to_five_frame_by_frame() {
    let serve = start("five", "renju", "60s").await;
    let (mut black, mut white) = started(&serve).await;
    let row = [p(3, 7), p(4, 7), p(5, 7), p(6, 7)];
    play(&mut black, &mut white, &row, &CORNERS).await;
    black.send(put_frame(p(7, 7))).await;
    ended(&mut black, &mut white, p(7, 7), "black's five d8-h8").await;
}

#[tokio::test]
async fn black_loses_on_a_forbidden_double_three_and_an_overline() {
    let serve = start("forbidden", "renju", "60s").await;
    // g8 makes the open threes g8-i8 and g8-g10.
    let (mut black, mut white) = started(&serve).await;
    let stones = [p(7, 7), p(8, 7), p(6, 8), p(6, 9)];
    play(&mut black, &mut white, &stones, &CORNERS).await;
    black.send(put_frame(p(6, 7))).await;
    ended(&mut white, &mut black, 0, "double-three").await;
    // f8 joins c8-e8 and g8-h8: six in a row.
    let (mut black, mut white) = started(&serve).await;
    let stones = [p(2, 7), p(3, 7), p(4, 7), p(6, 7), p(7, 7)];
    play(
        &mut black,
        &mut white,
        &stones,
        &[0x00, 0x0e, 0xe0, 0xee, 0x02],
    )
    .await;
    black.send(put_frame(p(5, 7))).await;
    ended(&mut white, &mut black, 0, "overline").await;
}

#[tokio::test]
async fn a_put_on_an_occupied_point_or_off_the_board_loses() {
    let serve = start("occupied", "renju", "60s").await;
    let (mut black, mut white) = started(&serve).await;
    put(&mut black, &mut white, p(7, 7)).await;
    white.send(put_frame(p(7, 7))).await;
    ended(&mut black, &mut white, 0, "white on black's stone").await;
    let (mut black, mut white) = started(&serve).await;
    put(&mut black, &mut white, p(7, 7)).await;
    put(&mut white, &mut black, p(0, 0)).await;
    // White's stone at (0,0): its byte is the start's data byte.
    black.send(put_frame(p(0, 0))).await;
    ended(&mut white, &mut black, 0, "black on white's stone at (0,0)").await;
    for off in [0xf0, 0x0f, 0xff] {
        let (mut black, mut white) = started(&serve).await;
        black.send(put_frame(off)).await;
        ended(&mut white, &mut black, 0, "off the board").await;
    }
}

#[tokio::test]
async fn malformed_frames_out_of_turn_and_unknown_commands_lose_in_a_game() {
    let serve = start("malformed", "renju", "60s").await;
    // A Ready whose data byte is neither 0 nor 1.
    let (mut black, mut white) = started(&serve).await;
    black.send([1, 0, 2]).await;
    ended(&mut white, &mut black, 0, "Ready with data 2").await;
    // An unknown command.
    let (mut black, mut white) = started(&serve).await;
    put(&mut black, &mut white, p(7, 7)).await;
    white.send([5, 0, 0]).await;
    ended(&mut black, &mut white, 0, "command 5").await;
    // A Put out of turn.
    let (mut black, mut white) = started(&serve).await;
    white.send(put_frame(p(7, 7))).await;
    ended(&mut black, &mut white, 0, "white before its turn").await;
    // A valid message at a pointless moment is ignored: Ready and Connect
    // in a game, unused bytes set.
    let (mut black, mut white) = started(&serve).await;
    black.send([1, 9, 1]).await;
    black.send([0, 9, 9]).await;
    black.send([3, 7, p(7, 7)]).await;
    black
        .expect([2, 1, p(7, 7)], "a Put with its turn byte set")
        .await;
    white.expect([2, 0, p(7, 7)], "your turn").await;
    // A frame in two writes is one frame.
    white.0.write_all(&[3]).await.unwrap();
    white.0.flush().await.unwrap();
    white.0.write_all(&[0, p(8, 8)]).await.unwrap();
    white.expect([2, 1, p(8, 8)], "a Put in two writes").await;
    black.expect([2, 0, p(8, 8)], "your turn").await;
}

#[tokio::test]
async fn before_the_start_a_put_loses_alone_and_a_stranger_is_closed_unanswered() {
    let serve = start("early", "renju", "60s").await;
    let mut black = Bot::seated(&serve, 0).await;
    let mut white = Bot::seated(&serve, 1).await;
    white.send(READY).await;
    black.send(put_frame(p(7, 7))).await;
    black.expect([4, 0, 0], "a Put before the start").await;
    black.expect_closed("End").await;
    // Black's seat is free again: the next program is black, and white's
    // Ready stands.
    let mut next = Bot::seated(&serve, 0).await;
    next.send(READY).await;
    next.expect([2, 0, 0], "start").await;
    white.expect([2, 1, 0], "start, nothing before").await;
    // A connection whose first frame is no Connect: no reply, closed.
    let mut stranger = Bot::connect(&serve).await;
    stranger.send(READY).await;
    stranger.expect_closed("a Ready first").await;
}

#[tokio::test]
async fn silence_past_the_turn_time_loses_on_time() {
    let serve = start("time", "renju", "400ms").await;
    // Black says nothing from the start.
    let (mut black, mut white) = started(&serve).await;
    ended(&mut white, &mut black, 1, "black silent from the start").await;
    // White says nothing after black's move.
    let (mut black, mut white) = started(&serve).await;
    put(&mut black, &mut white, p(7, 7)).await;
    ended(&mut black, &mut white, 1, "white silent").await;
    // Two bytes of a Put at the limit: a timeout, not an error.
    let (mut black, mut white) = started(&serve).await;
    black.0.write_all(&[3, 0]).await.unwrap();
    ended(&mut white, &mut black, 1, "half a Put").await;
}

#[tokio::test]
async fn a_player_who_leaves_or_half_closes_mid_game_loses() {
    let serve = start("leave", "renju", "60s").await;
    let (mut black, mut white) = started(&serve).await;
    put(&mut black, &mut white, p(7, 7)).await;
    drop(black);
    white.expect([4, 1, 0], "the opponent left").await;
    white.expect_closed("End").await;
    // A half-close counts, and the leaver still reads its End.
    let (mut black, mut white) = started(&serve).await;
    put(&mut black, &mut white, p(7, 7)).await;
    white.0.shutdown().await.unwrap();
    ended(&mut black, &mut white, 0, "white half-closed").await;
}

/// Black on every point with `(x + 2y) % 4 < 2` (113), white on the rest
/// (112): neither colour has more than two stones in a row in any
/// direction, so the board fills without a five.
#[tokio::test]
async fn a_full_board_is_a_draw_with_the_last_stone() {
    let serve = start("full", "freestyle", "60s").await;
    let (mut black, mut white) = started(&serve).await;
    let points = (0..15u8).flat_map(|y| (0..15u8).map(move |x| p(x, y)));
    let (b, w): (Vec<u8>, Vec<u8>) = points.partition(|&pt| ((pt >> 4) + 2 * (pt & 15)) % 4 < 2);
    assert_eq!((b.len(), w.len()), (113, 112));
    let last = *b.last().unwrap();
    play(&mut black, &mut white, &b[..112], &w).await;
    black.send(put_frame(last)).await;
    for bot in [&mut black, &mut white] {
        bot.expect([4, 2, last], "a draw, with the last stone")
            .await;
        bot.expect_closed("End").await;
    }
}

/// As on `madang omok serve`: two programs play a game, and the next two
/// play the next one (black and white again, each its own connection).
/// A third program while two are seated is seated black in a room of its
/// own (`docs/web-protocol.md`), where one table would refuse it.
#[tokio::test]
async fn two_pairs_of_bots_in_a_row_each_play_a_game() {
    let serve = start("pairs", "renju", "60s").await;
    let (mut black, mut white) = started(&serve).await;
    let row = [p(3, 7), p(4, 7), p(5, 7), p(6, 7)];
    play(&mut black, &mut white, &row, &CORNERS).await;
    black.send(put_frame(p(7, 7))).await;
    ended(&mut black, &mut white, p(7, 7), "first game").await;
    // White wins the second, on a column.
    let (mut black, mut white) = started(&serve).await;
    let black_stones = [p(7, 7), p(9, 9), p(11, 7), p(7, 11), p(11, 11)];
    let column = [p(1, 1), p(1, 2), p(1, 3), p(1, 4)];
    play(&mut black, &mut white, &black_stones, &column).await;
    white.send(put_frame(p(1, 5))).await;
    ended(&mut white, &mut black, p(1, 5), "second game").await;
    let (_black, _white) = started(&serve).await;
    let _third = Bot::seated(&serve, 0).await;
}

/// A bot waits in a room of its own; a person joins it from the lobby and
/// wins with five, the bot told each move and the End; the lobby then
/// still names both players though the bot has gone.
#[tokio::test]
async fn a_bot_waiting_in_the_lobby_plays_a_person_who_joins() {
    let serve = start("person", "renju", "60s").await;
    let mut bot = Bot::seated(&serve, 0).await;
    bot.send(READY).await;
    let mut pat = hello(&serve.ws, "pat").await.0;
    send(&mut pat, json!({"type": "lobby"})).await;
    let listed = until(&mut pat, |m| {
        m["type"] == "lobby" && m["rooms"][0]["seats"][0]["kind"] == "program"
    })
    .await;
    let room = listed["rooms"][0].clone();
    assert_eq!(room["referee"], true);
    assert_eq!(room["seats"][0]["kind"], "program");
    assert_eq!(room["seats"][1], Value::Null);
    send(&mut pat, json!({"type": "join", "room": room["id"]})).await;
    let you = until(&mut pat, |m| m["type"] == "you").await;
    assert_eq!(you["seat"], 1);
    bot.expect([2, 0, 0], "start, against a person").await;
    let bot_stones = [p(7, 7), p(9, 9), p(11, 7), p(7, 11), p(11, 11)];
    let pats = ["a1", "b1", "c1", "d1", "e1"];
    for (i, (&stone, point)) in bot_stones.iter().zip(pats).enumerate() {
        bot.send(put_frame(stone)).await;
        bot.expect([2, 1, stone], "acknowledged").await;
        let st = state_with(&mut pat, 2 * i + 1).await;
        assert_eq!(st["to_move"], "white");
        send(&mut pat, json!({"type": "move", "point": point})).await;
        if i < 4 {
            bot.expect([2, 0, p(i as u8, 0)], "the person's move").await;
        }
    }
    bot.expect([4, 0, p(4, 0)], "the person's five at e1").await;
    bot.expect_closed("End").await;
    // The program leaves with its game: a state over, its seat free.
    let over = until(&mut pat, |m| {
        m["type"] == "state" && m["status"] == "over" && m["seats"][0].is_null()
    })
    .await;
    assert_eq!(over["result"]["winner"], "white");
    assert_eq!(over["result"]["reason"], "five");
    assert_eq!(
        over["result"]["line"],
        json!(["a1", "b1", "c1", "d1", "e1"])
    );
    let program = over["result"]["players"][0].clone();
    assert_eq!(over["result"]["players"][1], "pat");
    // The lobby names it all the same.
    send(&mut pat, json!({"type": "lobby"})).await;
    let listed = until(&mut pat, |m| {
        m["type"] == "lobby" && m["rooms"][0]["seats"][0].is_null()
    })
    .await;
    assert_eq!(listed["rooms"][0]["status"], "over");
    assert_eq!(listed["rooms"][0]["players"], json!([program, "pat"]));
}

/// A person opens a room for a program and sits black; the next bot on
/// the referee port is seated there as white, and loses when it leaves.
#[tokio::test]
async fn a_person_who_opens_a_seat_for_a_program_gets_the_next_bot() {
    let serve = start("open-seat", "renju", "60s").await;
    let mut ann = hello(&serve.ws, "ann").await.0;
    send(
        &mut ann,
        json!({"type": "create", "game": "omok", "opponent": "program", "color": "black"}),
    )
    .await;
    let created = until(&mut ann, |m| m["type"] == "created").await;
    send(&mut ann, json!({"type": "join", "room": created["room"]})).await;
    assert_eq!(until(&mut ann, |m| m["type"] == "you").await["seat"], 0);
    let mut bot = Bot::seated(&serve, 1).await;
    bot.send(READY).await;
    bot.expect([2, 1, 0], "start: the person moves first").await;
    send(&mut ann, json!({"type": "move", "point": "h8"})).await;
    bot.expect([2, 0, p(7, 7)], "the person's h8").await;
    bot.send(put_frame(p(8, 8))).await;
    bot.expect([2, 1, p(8, 8)], "acknowledged").await;
    let st = state_with(&mut ann, 2).await;
    assert_eq!(st["moves"], json!(["h8", "i9"]));
    assert_eq!(st["seats"][1]["kind"], "program");
    drop(bot);
    let over = until(&mut ann, |m| m["type"] == "state" && m["status"] == "over").await;
    assert_eq!(over["result"]["winner"], "black");
    assert_eq!(over["result"]["reason"], "disconnected");
}
