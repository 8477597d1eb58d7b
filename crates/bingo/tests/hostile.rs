//! Whatever arrives from the network, nothing panics: arbitrary bytes through
//! the framing, arbitrary lines through the parser, and arbitrary sequences
//! of lines, timeouts and user actions through both sides' state machines.

use std::time::{Duration, Instant};

use bingo::frame;
use bingo::message::{Extensions, Message};
use bingo::session::{CardChoice, Config, ConnId, Input, Limits, Output, Session};
use bingo::settings::{Role, Settings};
use proptest::prelude::*;

/// Lines that are close to valid, so that the state machine gets past the
/// handshake, mixed with noise.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u16..30).prop_map(|k| format!("CALL {k}")),
        (0u16..30).prop_map(|k| format!("FINAL {k}")),
        Just("BINGO".to_owned()),
        Just("YIELD".to_owned()),
        Just("TIE".to_owned()),
        Just("HELLO bingo/1 verify resume".to_owned()),
        Just("HELLO bingo/1 size=4 lines=2 first=guest id=x verify resume".to_owned()),
        Just(format!("COMMIT {}", "0".repeat(64))),
        Just("REVEAL 00 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16".to_owned()),
        (0usize..40).prop_map(|n| format!("RESUME x {n}")),
        (0usize..40).prop_map(|n| format!("RESUME x {n} {}", "ab".repeat(16))),
        ".{0,40}".prop_map(|text| format!("CHAT {text}")),
        ".{0,60}",
    ]
}

/// An input, or (`None`) a jump of the clock by some seconds.
fn event() -> impl Strategy<Value = Result<Input, u64>> {
    let conn = (0u64..3).prop_map(ConnId);
    prop_oneof![
        6 => (conn.clone(), line()).prop_map(|(c, l)| Ok(Input::Line(c, l))),
        1 => (0u16..30).prop_map(|k| Ok(Input::Call(k))),
        1 => (0u64..700).prop_map(Err),
        1 => conn.clone().prop_map(|c| Ok(Input::Closed(c))),
        1 => conn.clone().prop_map(|c| Ok(Input::Connected(c))),
        1 => conn.prop_map(|c| Ok(Input::ConnectFailed(c, "no".into()))),
        1 => Just(Ok(Input::Quit)),
        1 => ".{0,20}".prop_map(|t| Ok(Input::Chat(t))),
    ]
}

fn session(role: Role, now: Instant) -> Session {
    Session::new(
        Config {
            role,
            settings: Settings::new(4, 2, Role::Guest).unwrap(),
            card: CardChoice::Shuffled(5),
            extensions: Extensions::ALL,
            game_id: "x".into(),
            resume_key: "ab".repeat(16),
            salt: "00".into(),
            limits: Limits::default(),
        },
        now,
    )
}

proptest! {
    #[test]
    fn framing_takes_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2100)) {
        if let Ok(Some((line, used))) = frame::next_line(&bytes) {
            prop_assert!(used <= bytes.len());
            prop_assert!(line.len() <= frame::MAX_LINE);
        }
    }

    #[test]
    fn parsing_takes_any_line(text in ".{0,80}") {
        if let Ok(message) = Message::parse(&text) {
            // What parses, prints back to something that parses the same.
            prop_assert_eq!(Message::parse(&message.to_string()), Ok(message));
        }
    }

    #[test]
    fn sessions_take_any_events(
        guest in any::<bool>(),
        events in proptest::collection::vec(event(), 0..40),
    ) {
        let role = if guest { Role::Guest } else { Role::Host };
        let mut now = Instant::now();
        let mut session = session(role, now);
        for event in events {
            let was_over = session.ending().is_some();
            match event {
                Ok(input) => session.handle(input, now),
                Err(secs) => {
                    now += Duration::from_secs(secs);
                    if session.poll_timeout().is_some_and(|at| at <= now) {
                        session.handle_timeout(now);
                    }
                    // Every limit due has taken effect: a driver never spins.
                    prop_assert!(session.poll_timeout().is_none_or(|at| at > now));
                }
            }
            let outputs: Vec<Output> = std::iter::from_fn(|| session.poll_output()).collect();
            if was_over {
                // An ended game sends nothing more.
                prop_assert!(!outputs.iter().any(|o| matches!(o, Output::Send(..))), "{outputs:?}");
            }
            let errors = outputs
                .iter()
                .filter(|o| matches!(o, Output::Send(_, Message::Error(_))))
                .count();
            prop_assert!(errors <= 1);
        }
    }
}
