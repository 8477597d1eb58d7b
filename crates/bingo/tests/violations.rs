//! Violations that only the state machine can see: messages of the
//! extensions out of place, and answers that do not fit the last call.

mod common;

use std::time::Instant;

use bingo::message::{Answer, Extensions, Message};
use bingo::session::{ConnId, Ending, Input, Output, Session};
use bingo::settings::{Role, Settings};
use bingo::violation::Violation;
use common::{config, drain};

const CONN: ConnId = ConnId(1);

fn host(extensions: Extensions, first: Role) -> Session {
    let mut host = Session::new(
        bingo::Config {
            settings: Settings::new(5, 5, first).unwrap(),
            card: bingo::CardChoice::Shuffled(3),
            extensions,
            ..config(Role::Host)
        },
        Instant::now(),
    );
    host.handle(Input::Connected(CONN), Instant::now());
    drain(&mut host);
    host
}

/// Feeds lines to `session`; the last must be refused with `ERROR` giving
/// `violation`, and the game must end with it.
fn refused(session: &mut Session, lines: &[&str], violation: Violation) {
    let (last, before) = lines.split_last().unwrap();
    for line in before {
        session.handle(Input::Line(CONN, (*line).into()), Instant::now());
        let outputs = drain(session);
        assert!(
            !outputs.contains(&Output::Close(CONN)),
            "{line} was refused: {outputs:?}"
        );
    }
    session.handle(Input::Line(CONN, (*last).into()), Instant::now());
    let outputs = drain(session);
    assert!(
        outputs.contains(&Output::Send(CONN, Message::Error(violation.to_string()))),
        "{last}: {outputs:?}"
    );
    assert!(outputs.contains(&Output::Close(CONN)));
    assert_eq!(session.ending(), Some(&Ending::Violation(violation)));
}

#[test]
fn a_call_before_the_commitment() {
    let mut session = host(Extensions::ALL, Role::Guest);
    refused(
        &mut session,
        &["HELLO bingo/1 verify", "CALL 1"],
        Violation::ExpectedCommit("CALL"),
    );
}

#[test]
fn extension_messages_that_were_not_agreed() {
    let commit = format!("COMMIT {}", "0".repeat(64));
    for (line, keyword) in [
        (commit.as_str(), "COMMIT"),
        ("REVEAL 00 1,2", "REVEAL"),
        ("RESUME g 0", "RESUME"),
    ] {
        let mut session = host(Extensions::ALL, Role::Guest);
        refused(
            &mut session,
            &["HELLO bingo/1", line],
            Violation::Unexpected(keyword),
        );
    }
}

#[test]
fn a_second_hello() {
    let mut session = host(Extensions::default(), Role::Guest);
    refused(
        &mut session,
        &["HELLO bingo/1", "HELLO bingo/1"],
        Violation::Unexpected("HELLO"),
    );
}

#[test]
fn tie_does_not_answer_call() {
    // One call cannot complete five lines: the host's first call is a CALL,
    // which TIE cannot answer.
    let mut session = host(Extensions::default(), Role::Host);
    session.handle(Input::Line(CONN, "HELLO bingo/1".into()), Instant::now());
    session.handle(Input::Call(1), Instant::now());
    drain(&mut session);
    refused(
        &mut session,
        &["TIE"],
        Violation::VerdictToCall {
            answer: Answer::Tie,
            call: 1,
        },
    );
}

#[test]
fn the_reason_sent_is_the_violations_text() {
    let mut session = host(Extensions::default(), Role::Guest);
    session.handle(Input::Line(CONN, "HELLO bingo/1".into()), Instant::now());
    session.handle(Input::Line(CONN, "CALL 26".into()), Instant::now());
    let sent: Vec<String> = common::lines(&drain(&mut session));
    assert_eq!(
        sent.last().map(String::as_str),
        Some("ERROR number 26 is out of range 1..25")
    );
}

#[test]
fn unknown_extensions_are_ignored() {
    let mut session = host(Extensions::ALL, Role::Guest);
    session.handle(
        Input::Line(CONN, "HELLO bingo/1 players=3 teams verify".into()),
        Instant::now(),
    );
    assert!(!drain(&mut session).contains(&Output::Close(CONN)));
    assert_eq!(
        session.extensions(),
        Extensions {
            verify: true,
            resume: false
        }
    );
}
