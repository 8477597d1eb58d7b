//! Violations that only the state machine can see: messages of the
//! extensions out of place, and answers that do not fit the last call.

use bingo::message::Extensions;
use bingo::session::{Action, CardChoice, Config, Ending, Event, Limits, Session};
use bingo::settings::{Role, Settings};

fn host(extensions: Extensions, first: Role) -> Session {
    let mut host = Session::new(Config {
        role: Role::Host,
        settings: Settings::new(5, 5, first).unwrap(),
        card: CardChoice::Shuffled(3),
        extensions,
        game_id: "g".into(),
        salt: "00".into(),
        limits: Limits::default(),
    });
    host.handle(Event::Connected);
    host
}

/// Feeds lines to `session`; the last must be refused with `ERROR` naming
/// `reason`, and the game must end.
fn refused(session: &mut Session, lines: &[&str], reason: &str) {
    let (last, before) = lines.split_last().unwrap();
    for line in before {
        let actions = session.handle(Event::Line((*line).into()));
        assert!(
            !actions.contains(&Action::Close),
            "{line} was accepted: {actions:?}"
        );
    }
    let actions = session.handle(Event::Line((*last).into()));
    let error = actions.iter().find_map(|action| match action {
        Action::Send(message) => Some(message.to_string()),
        _ => None,
    });
    assert!(
        error
            .as_deref()
            .is_some_and(|e| e.starts_with("ERROR") && e.contains(reason)),
        "{last}: {error:?}"
    );
    assert!(actions.contains(&Action::Close));
    assert!(matches!(
        session.ending(),
        Some(Ending::Error { sent: true, .. })
    ));
}

#[test]
fn a_call_before_the_commitment() {
    let mut session = host(Extensions::ALL, Role::Guest);
    refused(
        &mut session,
        &["HELLO bingo/1 verify", "CALL 1"],
        "expected COMMIT",
    );
}

#[test]
fn extension_messages_that_were_not_agreed() {
    let mut session = host(Extensions::ALL, Role::Guest);
    let commit = format!("COMMIT {}", "0".repeat(64));
    refused(
        &mut session,
        &["HELLO bingo/1", &commit],
        "unexpected COMMIT",
    );
    let mut session = host(Extensions::ALL, Role::Guest);
    refused(
        &mut session,
        &["HELLO bingo/1", "REVEAL 00 1,2"],
        "unexpected REVEAL",
    );
    let mut session = host(Extensions::ALL, Role::Guest);
    refused(
        &mut session,
        &["HELLO bingo/1", "RESUME g 0"],
        "unexpected RESUME",
    );
}

#[test]
fn a_second_hello() {
    let mut session = host(Extensions::default(), Role::Guest);
    refused(
        &mut session,
        &["HELLO bingo/1", "HELLO bingo/1"],
        "unexpected HELLO",
    );
}

#[test]
fn tie_does_not_answer_call() {
    // One call cannot complete five lines: the host's first call is a CALL,
    // which TIE cannot answer.
    let mut session = host(Extensions::default(), Role::Host);
    session.handle(Event::Line("HELLO bingo/1".into()));
    session.handle(Event::Call(1));
    refused(&mut session, &["TIE"], "TIE answers FINAL");
}

#[test]
fn unknown_extensions_are_ignored() {
    let mut session = host(Extensions::ALL, Role::Guest);
    let actions = session.handle(Event::Line("HELLO bingo/1 players=3 teams verify".into()));
    assert!(!actions.contains(&Action::Close));
    assert_eq!(
        session.extensions(),
        Extensions {
            verify: true,
            resume: false
        }
    );
}
