//! Whatever arrives from the network, nothing panics: arbitrary bytes through
//! the framing, arbitrary lines through the parser, and arbitrary sequences
//! of lines, timeouts and user actions through both sides' state machines.

use bingo::frame;
use bingo::message::{Extensions, Message};
use bingo::session::{Action, CardChoice, Config, Event, Limits, Session};
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
        ".{0,40}".prop_map(|text| format!("CHAT {text}")),
        ".{0,60}",
    ]
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        6 => line().prop_map(Event::Line),
        1 => (0u16..30).prop_map(Event::Call),
        1 => Just(Event::IdleTimeout),
        1 => Just(Event::Closed),
        1 => Just(Event::Connected),
        1 => Just(Event::Quit),
        1 => ".{0,20}".prop_map(Event::Chat),
    ]
}

fn session(role: Role) -> Session {
    Session::new(Config {
        role,
        settings: Settings::new(4, 2, Role::Guest).unwrap(),
        card: CardChoice::Shuffled(5),
        extensions: Extensions::ALL,
        game_id: "x".into(),
        salt: "00".into(),
        limits: Limits::default(),
    })
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
        let mut session = session(role);
        for event in events {
            let was_over = session.ending().is_some();
            let actions = session.handle(event);
            if was_over {
                // An ended game sends nothing more.
                prop_assert!(!actions.iter().any(|a| matches!(a, Action::Send(_))), "{actions:?}");
            }
            let errors = actions
                .iter()
                .filter(|a| matches!(a, Action::Send(Message::Error(_))))
                .count();
            prop_assert!(errors <= 1);
        }
    }
}
