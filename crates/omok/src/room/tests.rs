//! The room in simulated time: every clock and grace is driven by hand.

use super::*;

const SEC: Duration = Duration::from_secs(1);

fn config(time_control: TimeControl) -> RoomConfig {
    RoomConfig {
        rule: Rule::Renju,
        time_control,
        grace: 60 * SEC,
        idle_timeout: 300 * SEC,
        open_to_programs: false,
        first_seat: Color::Black,
    }
}

fn p(s: &str) -> Point {
    s.parse().unwrap()
}

struct Harness {
    room: Room,
    now: Instant,
    out: Vec<Output>,
}

impl Harness {
    fn new(config: RoomConfig) -> Harness {
        let now = Instant::now();
        Harness {
            room: Room::new(config, now),
            now,
            out: Vec::new(),
        }
    }

    fn send(&mut self, from: ClientId, input: Input) {
        self.room.handle(from, input, self.now);
        self.drain();
    }

    fn join(&mut self, from: ClientId, token: &str, play: bool) {
        self.send(
            from,
            Input::Join {
                name: format!("n{from}"),
                token: token.into(),
                play,
            },
        );
    }

    fn advance(&mut self, by: Duration) {
        self.now += by;
        if self.room.poll_timeout().is_some_and(|t| t <= self.now) {
            self.room.handle_timeout(self.now);
        }
        self.drain();
    }

    fn drain(&mut self) {
        while let Some(o) = self.room.poll_output() {
            self.out.push(o);
        }
    }

    fn take(&mut self) -> Vec<Output> {
        std::mem::take(&mut self.out)
    }

    fn state(&self) -> Snapshot {
        self.room.snapshot(self.now)
    }

    fn refusals(&mut self) -> Vec<Refusal> {
        self.take()
            .into_iter()
            .filter_map(|o| match o {
                Output::Refused { why, .. } => Some(why),
                _ => None,
            })
            .collect()
    }

    fn play(&mut self, moves: &[(ClientId, &str)]) {
        for &(c, m) in moves {
            self.send(c, Input::Move(p(m)));
            assert_eq!(self.refusals(), vec![], "move {m}");
        }
    }
}

fn two_people(tc: TimeControl) -> Harness {
    let mut h = Harness::new(config(tc));
    h.join(1, "a", true);
    h.join(2, "b", true);
    h.take();
    h
}

#[test]
fn two_people_play_to_five_and_the_record_comes_before_the_result() {
    let mut h = two_people(TimeControl::None);
    assert_eq!(h.state().status, "playing");
    h.play(&[
        (1, "h8"),
        (2, "a1"),
        (1, "i8"),
        (2, "a2"),
        (1, "j8"),
        (2, "a3"),
        (1, "k8"),
        (2, "a4"),
    ]);
    h.send(1, Input::Move(p("l8")));
    let out = h.take();
    let finished = out
        .iter()
        .position(|o| matches!(o, Output::Finished(_)))
        .unwrap();
    let state = out
        .iter()
        .position(|o| matches!(o, Output::State(_)))
        .unwrap();
    assert!(finished < state);
    let Output::Finished(f) = &out[finished] else {
        unreachable!()
    };
    assert_eq!(f.winner, Some(Color::Black));
    assert_eq!(f.reason, EndReason::Five);
    assert_eq!(f.names, ["n1".to_owned(), "n2".to_owned()]);
    assert_eq!(f.moves.len(), 9);
    let s = h.state();
    assert_eq!(s.status, "over");
    let r = s.result.unwrap();
    assert_eq!(r.winner, Some("black"));
    assert_eq!(r.line, ["h8", "i8", "j8", "k8", "l8"]);
}

#[test]
fn illegal_clicks_are_refused_without_losing() {
    let mut h = two_people(TimeControl::None);
    h.send(2, Input::Move(p("h8")));
    assert_eq!(h.refusals(), vec![Refusal::NotYourTurn]);
    h.send(3, Input::Move(p("h8")));
    assert_eq!(h.refusals(), vec![Refusal::NotAPlayer]);
    // A double-three for black at h8: g8 i8 and h7 h9 (white far away).
    h.play(&[
        (1, "g8"),
        (2, "a1"),
        (1, "i8"),
        (2, "a3"),
        (1, "h7"),
        (2, "a5"),
        (1, "h9"),
        (2, "a7"),
    ]);
    assert!(h.state().forbidden.contains(&"h8"));
    h.send(1, Input::Move(p("h8")));
    assert_eq!(h.refusals(), vec![Refusal::Forbidden]);
    h.send(1, Input::Move(p("a1")));
    assert_eq!(h.refusals(), vec![Refusal::Occupied]);
    assert_eq!(h.state().status, "playing");
}

#[test]
fn a_watcher_only_watches_and_is_counted() {
    let mut h = two_people(TimeControl::None);
    h.join(3, "c", true);
    assert!(h.take().contains(&Output::You { to: 3, seat: None }));
    assert_eq!(h.state().spectators, 1);
    h.send(3, Input::Resign);
    assert_eq!(h.refusals(), vec![Refusal::NotAPlayer]);
    h.send(3, Input::Chat("hi".into()));
    assert_eq!(
        h.take(),
        vec![Output::Chat {
            from: "n3".into(),
            text: "hi".into()
        }]
    );
}

#[test]
fn a_seat_is_resumed_within_grace_and_lost_after_it() {
    let mut h = two_people(TimeControl::None);
    h.play(&[(1, "h8")]);
    h.send(2, Input::Leave);
    assert!(!h.state().seats[1].as_ref().unwrap().connected);
    h.advance(59 * SEC);
    h.join(7, "b", true);
    assert!(h.take().contains(&Output::You {
        to: 7,
        seat: Some(1)
    }));
    h.play(&[(7, "a1")]);
    assert_eq!(h.state().moves, ["h8", "a1"]);
    h.send(7, Input::Leave);
    h.advance(60 * SEC);
    let s = h.state();
    assert_eq!(s.status, "over");
    let r = s.result.unwrap();
    assert_eq!((r.winner, r.reason.as_str()), (Some("black"), "abandoned"));
}

#[test]
fn per_move_clock_flags_the_player_to_move() {
    let mut h = two_people(TimeControl::PerMove { ms: 15_000 });
    h.advance(10 * SEC);
    h.play(&[(1, "h8")]);
    assert_eq!(h.state().clock.white_ms, Some(15_000));
    h.advance(14 * SEC);
    assert_eq!(h.state().status, "playing");
    h.advance(SEC);
    let r = h.state().result.unwrap();
    assert_eq!((r.winner, r.reason.as_str()), (Some("black"), "timeout"));
}

#[test]
fn per_game_clock_with_increment() {
    let mut h = two_people(TimeControl::PerGame {
        base_ms: 60_000,
        increment_ms: 5_000,
    });
    h.advance(20 * SEC);
    h.play(&[(1, "h8")]);
    assert_eq!(h.state().clock.black_ms, Some(45_000));
    h.advance(59 * SEC);
    h.play(&[(2, "h9")]);
    h.advance(45 * SEC);
    let r = h.state().result.unwrap();
    assert_eq!((r.winner, r.reason.as_str()), (Some("white"), "timeout"));
}

#[test]
fn takeback_draw_resign_and_rematch_with_colours_swapped() {
    let mut h = two_people(TimeControl::None);
    h.play(&[(1, "h8"), (2, "h9")]);
    h.send(1, Input::Takeback);
    assert_eq!(h.refusals(), vec![]);
    assert_eq!(h.state().takeback_request, Some("black"));
    h.send(2, Input::AcceptTakeback);
    assert_eq!(h.refusals(), vec![]);
    assert_eq!(h.state().moves, Vec::<String>::new());
    assert_eq!(h.state().to_move, Some("black"));
    h.play(&[(1, "h8")]);
    h.send(2, Input::OfferDraw);
    h.send(2, Input::Decline);
    assert_eq!(h.refusals(), vec![Refusal::NoOffer]);
    h.send(1, Input::OfferDraw);
    h.take();
    let r = h.state().result.unwrap();
    assert_eq!((r.winner, r.reason.as_str()), (None, "agreed"));
    h.send(1, Input::Rematch);
    assert_eq!(h.state().status, "over");
    h.send(2, Input::Rematch);
    let s = h.state();
    assert_eq!((s.status, s.game), ("playing", 2));
    assert_eq!(s.seats[1].as_ref().unwrap().color, "black");
    h.play(&[(2, "h8")]);
    h.send(2, Input::Resign);
    let r = h.state().result.unwrap();
    assert_eq!(
        (r.winner, r.reason.as_str()),
        (Some("white"), "resignation")
    );
}

#[test]
fn states_on_one_line_only_add_stones() {
    let mut h = two_people(TimeControl::None);
    let m = |point| Input::Move(p(point));
    let script = [
        (1, m("h8")),
        (2, m("h9")),
        (1, m("i8")),
        // White takes back its stone and black's after it; two others
        // follow.
        (2, Input::Takeback),
        (1, Input::AcceptTakeback),
        (2, m("j9")),
        (1, m("i7")),
        // Black takes back its own last stone.
        (1, Input::Takeback),
        (2, Input::AcceptTakeback),
        (1, m("g7")),
        (2, Input::Resign),
        (1, Input::Rematch),
        (2, Input::Rematch),
        (2, m("h8")),
        (1, m("a1")),
    ];
    let mut states = Vec::new();
    for (from, input) in script {
        h.send(from, input);
        for output in h.take() {
            match output {
                Output::State(s) => states.push(*s),
                Output::Refused { why, .. } => panic!("refused: {why}"),
                _ => {}
            }
        }
    }
    let mut lines = std::collections::BTreeSet::new();
    for (i, a) in states.iter().enumerate() {
        lines.insert((a.game, a.line));
        for b in &states[i..] {
            if (a.game, a.line) == (b.game, b.line) {
                let (short, long) = if a.moves.len() <= b.moves.len() {
                    (a, b)
                } else {
                    (b, a)
                };
                assert_eq!(short.moves, long.moves[..short.moves.len()]);
            }
        }
    }
    // Each takeback, the resignation and the new game began a line.
    assert!(lines.len() >= 5, "{lines:?}");
}

#[test]
fn the_engine_is_asked_once_and_grants_takebacks() {
    let mut h = Harness::new(config(TimeControl::None));
    h.join(1, "a", true);
    h.send(
        1,
        Input::InviteEngine {
            name: "madang".into(),
            level: 2,
        },
    );
    h.send(1, Input::Move(p("h8")));
    let turns: Vec<EngineTurn> = h
        .take()
        .into_iter()
        .filter_map(|o| match o {
            Output::EngineTurn(t) => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].moves, [p("h8")]);
    h.room.engine_moved((1, 0), p("a1"), h.now);
    h.room.engine_moved(turns[0].key, p("h9"), h.now);
    h.drain();
    assert_eq!(h.state().moves, ["h8", "h9"]);
    h.send(1, Input::Takeback);
    assert_eq!(h.refusals(), vec![]);
    assert_eq!(h.state().moves, Vec::<String>::new());
}

#[test]
fn two_programs_play_each_other_as_on_the_referee_port() {
    let mut cfg = config(TimeControl::PerMove { ms: 15_000 });
    cfg.open_to_programs = true;
    let mut h = Harness::new(cfg);
    let frames = |h: &mut Harness| -> Vec<(ClientId, [u8; 3])> {
        h.take()
            .into_iter()
            .filter_map(|o| match o {
                Output::Frame { to, frame } => Some((to, frame)),
                Output::Close(c) => Some((c, [9, 9, 9])),
                _ => None,
            })
            .collect()
    };
    h.send(10, Input::Frame([0, 0, 0]));
    h.send(11, Input::Frame([0, 0, 0]));
    assert_eq!(frames(&mut h), [(10, [0, 0, 1]), (11, [0, 1, 1])]);
    assert!(!h.room.wants_program());
    h.send(10, Input::Frame([1, 0, 1]));
    h.send(11, Input::Frame([1, 0, 1]));
    assert_eq!(frames(&mut h), [(10, [2, 0, 0]), (11, [2, 1, 0])]);
    h.send(10, Input::Frame([3, 0, 0x77]));
    assert_eq!(frames(&mut h), [(10, [2, 1, 0x77]), (11, [2, 0, 0x77])]);
    h.advance(15 * SEC);
    assert_eq!(
        frames(&mut h),
        [
            (10, [4, 1, 1]),
            (11, [4, 0, 1]),
            (10, [9, 9, 9]),
            (11, [9, 9, 9])
        ]
    );
    let r = h.state().result.unwrap();
    assert_eq!((r.winner, r.reason.as_str()), (Some("black"), "timeout"));
}

#[test]
fn a_person_takes_the_seat_next_to_a_waiting_program() {
    let mut cfg = config(TimeControl::None);
    cfg.open_to_programs = true;
    let mut h = Harness::new(cfg);
    h.send(10, Input::Frame([0, 0, 0]));
    h.send(10, Input::Frame([1, 0, 1]));
    h.join(1, "a", true);
    assert!(h.take().contains(&Output::Frame {
        to: 10,
        frame: [2, 0, 0]
    }));
    h.send(10, Input::Frame([3, 0, 0x77]));
    h.send(1, Input::Move(p("h9")));
    assert!(h.take().contains(&Output::Frame {
        to: 10,
        frame: [2, 0, 0x78]
    }));
    h.send(1, Input::Takeback);
    assert_eq!(h.refusals(), vec![Refusal::NoTakebackWithProgram]);
    h.send(10, Input::Leave);
    let r = h.state().result.unwrap();
    assert_eq!(
        (r.winner, r.reason.as_str()),
        (Some("white"), "disconnected")
    );
}

#[test]
fn an_empty_room_closes_after_its_grace() {
    let mut h = Harness::new(config(TimeControl::None));
    h.advance(59 * SEC);
    assert!(!h.take().contains(&Output::Closed));
    h.join(1, "a", true);
    h.send(1, Input::Leave);
    h.advance(60 * SEC);
    assert!(h.take().contains(&Output::Closed));
}

#[test]
fn shutdown_ends_a_game_in_progress_as_a_draw_recorded_first() {
    let mut h = two_people(TimeControl::None);
    h.play(&[(1, "h8"), (2, "a1"), (1, "i8")]);
    h.room.shutdown(h.now);
    h.drain();
    let out = h.take();
    let finished = out
        .iter()
        .position(|o| matches!(o, Output::Finished(_)))
        .expect("a record");
    let Output::Finished(f) = &out[finished] else {
        unreachable!()
    };
    assert_eq!(
        (f.winner, f.reason, f.moves.len()),
        (None, EndReason::Shutdown, 3)
    );
    let Some(Output::State(state)) = out[finished..]
        .iter()
        .find(|o| matches!(o, Output::State(_)))
    else {
        panic!("no state after the record: {out:?}");
    };
    assert_eq!(state.status, "over");
    let result = state.result.as_ref().unwrap();
    assert_eq!((result.winner, result.reason.as_str()), (None, "shutdown"));
    // Between games nothing is recorded.
    let mut h = two_people(TimeControl::None);
    h.send(1, Input::Resign);
    h.take();
    h.room.shutdown(h.now);
    h.drain();
    assert!(!h.take().iter().any(|o| matches!(o, Output::Finished(_))));
}

#[test]
fn a_failed_engine_loses_as_gone_and_the_game_is_recorded() {
    let mut h = Harness::new(config(TimeControl::None));
    h.join(1, "a", true);
    h.send(
        1,
        Input::InviteEngine {
            name: "broken".into(),
            level: 1,
        },
    );
    h.send(1, Input::Move(p("h8")));
    let key = h
        .take()
        .into_iter()
        .find_map(|o| match o {
            Output::EngineTurn(t) => Some(t.key),
            _ => None,
        })
        .expect("the engine is asked");
    // A stale failure changes nothing.
    h.room.engine_failed((key.0, key.1 + 1), h.now);
    h.drain();
    assert_eq!(h.state().status, "playing");
    h.room.engine_failed(key, h.now);
    h.drain();
    let out = h.take();
    let Some(Output::Finished(f)) = out.iter().find(|o| matches!(o, Output::Finished(_))) else {
        panic!("no record: {out:?}");
    };
    assert_eq!(
        (f.winner, f.reason),
        (Some(Color::Black), EndReason::Disconnected)
    );
    let s = h.state();
    assert_eq!(s.status, "over");
    assert_eq!(s.result.unwrap().reason, "disconnected");
}

#[test]
fn every_point_is_named_as_it_prints_and_parses_back() {
    for point in Point::all() {
        assert_eq!(point_name(point), point.to_string());
        assert_eq!(p(point_name(point)), point);
    }
}
