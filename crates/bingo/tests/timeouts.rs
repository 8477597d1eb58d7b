//! Every time limit of a bingo session, on a simulated clock: each fires
//! exactly when due, not a moment before, and only for the side it belongs
//! to. (The resume grace and the limits of rejoin attempts are in
//! `resume.rs`.)

mod common;

use std::time::{Duration, Instant};

use bingo::session::{ConnId, Disconnect, Ending, Input, Limits, Output, Session, Verification};
use bingo::settings::Role;
use bingo::violation::Violation;
use common::{Pair, config, drain, lines};

const TICK: Duration = Duration::from_millis(1);
const CONN: ConnId = ConnId(9);

/// A host with one connection open at `t0`.
fn host_with_a_connection(t0: Instant) -> Session {
    let mut host = Session::new(config(Role::Host), t0);
    host.handle(Input::Connected(CONN), t0);
    drain(&mut host);
    host
}

fn run_to(session: &mut Session, at: Instant) -> Vec<Output> {
    if session.poll_timeout().is_some_and(|due| due <= at) {
        session.handle_timeout(at);
    }
    drain(session)
}

#[test]
fn the_hello_limit() {
    let t0 = Instant::now();
    let hello = Limits::default().hello;
    let mut host = host_with_a_connection(t0);
    assert_eq!(host.poll_timeout(), Some(t0 + hello));
    assert!(run_to(&mut host, t0 + hello - TICK).is_empty());
    let outputs = run_to(&mut host, t0 + hello);
    assert_eq!(lines(&outputs), ["ERROR no message for 30 s"]);
    assert!(outputs.contains(&Output::Close(CONN)));
    assert_eq!(
        host.ending(),
        Some(&Ending::Violation(Violation::Silence(hello)))
    );
}

#[test]
fn chat_does_not_stretch_the_hello_limit() {
    let t0 = Instant::now();
    let hello = Limits::default().hello;
    let mut host = host_with_a_connection(t0);
    for second in [10, 20, 29] {
        host.handle(
            Input::Line(CONN, "CHAT still here".into()),
            t0 + Duration::from_secs(second),
        );
    }
    assert_eq!(host.poll_timeout(), Some(t0 + hello));
    run_to(&mut host, t0 + hello);
    assert!(host.ending().is_some());
}

#[test]
fn a_port_probe_is_not_a_game() {
    let t0 = Instant::now();
    let mut host = host_with_a_connection(t0);
    host.handle(Input::Closed(CONN), t0 + TICK);
    assert!(host.ending().is_none());
    assert!(host.wants_connection());
    assert_eq!(host.poll_timeout(), None, "no limit without a connection");
}

#[test]
fn the_commit_wait_is_the_hello_limit() {
    let t0 = Instant::now();
    let mut host = host_with_a_connection(t0);
    let later = t0 + Duration::from_secs(20);
    let key = "ab".repeat(16);
    host.handle(
        Input::Line(CONN, format!("HELLO bingo/1 key={key} verify resume")),
        later,
    );
    drain(&mut host);
    let hello = Limits::default().hello;
    assert_eq!(host.poll_timeout(), Some(later + hello), "counted afresh");
    run_to(&mut host, later + hello);
    assert_eq!(
        host.ending(),
        Some(&Ending::Violation(Violation::Silence(hello)))
    );
}

#[test]
fn only_the_side_waiting_for_a_call_times_out() {
    let mut pair = Pair::started();
    let idle = Limits::default().idle;
    // The host is on turn: it waits for nobody; the guest waits for it.
    assert_eq!(pair.host.poll_timeout(), None);
    assert_eq!(pair.guest.poll_timeout(), Some(pair.now + idle));
    pair.advance(idle - TICK);
    assert!(pair.guest.ending().is_none());
    pair.advance(TICK);
    assert_eq!(
        pair.guest.ending(),
        Some(&Ending::Violation(Violation::Silence(idle)))
    );
    assert_eq!(
        pair.host.ending(),
        Some(&Ending::PeerError("no message for 600 s".into()))
    );
}

#[test]
fn a_call_or_chat_during_play_restarts_the_idle_limit() {
    let mut pair = Pair::started();
    let idle = Limits::default().idle;
    pair.advance(idle / 2);
    pair.input(Role::Host, Input::Chat("thinking".into()));
    assert_eq!(pair.guest.poll_timeout(), Some(pair.now + idle));
    pair.advance(idle / 2);
    pair.input(Role::Host, Input::Call(1));
    // Now the guest is on turn and the host waits.
    assert_eq!(pair.guest.poll_timeout(), None);
    assert_eq!(pair.host.poll_timeout(), Some(pair.now + idle));
    pair.advance(idle - TICK);
    assert!(pair.host.ending().is_none());
}

#[test]
fn the_reveal_wait() {
    // A host without resume (so a drop cannot stretch the wait) loses on the
    // guest's BINGO, sends its REVEAL, and hears nothing more.
    let mut host_config = config(Role::Host);
    host_config.extensions.resume = false;
    let close = Limits::default().close;
    let t0 = Instant::now();
    let mut host = Session::new(host_config, t0);
    host.handle(Input::Connected(CONN), t0);
    host.handle(Input::Line(CONN, "HELLO bingo/1 verify".into()), t0);
    host.handle(Input::Line(CONN, format!("COMMIT {}", "0".repeat(64))), t0);
    host.handle(Input::Call(1), t0);
    host.handle(Input::Line(CONN, "BINGO".into()), t0);
    drain(&mut host);
    assert_eq!(host.poll_timeout(), Some(t0 + close));
    run_to(&mut host, t0 + close - TICK);
    assert!(host.ending().is_none());
    run_to(&mut host, t0 + close);
    assert!(
        matches!(
            host.ending(),
            Some(Ending::Result {
                verification: Verification::Missing(_),
                ..
            })
        ),
        "{:?}",
        host.ending()
    );
}

#[test]
fn the_guests_connect_limit() {
    let t0 = Instant::now();
    let mut guest = Session::new(config(Role::Guest), t0);
    let connect = Limits::default().connect;
    assert_eq!(guest.poll_timeout(), Some(t0 + connect));
    let outputs = run_to(&mut guest, t0 + connect);
    assert!(outputs.contains(&Output::Close(ConnId(0))));
    assert!(matches!(
        guest.ending(),
        Some(Ending::Disconnected(Disconnect::ConnectFailed(_)))
    ));
}

#[test]
fn a_silent_host_gets_the_hello_limit() {
    let t0 = Instant::now();
    let mut guest = Session::new(config(Role::Guest), t0);
    let later = t0 + Duration::from_secs(1);
    guest.handle(Input::Connected(ConnId(0)), later);
    let hello = Limits::default().hello;
    assert_eq!(guest.poll_timeout(), Some(later + hello));
    run_to(&mut guest, later + hello);
    assert_eq!(
        guest.ending(),
        Some(&Ending::Violation(Violation::Silence(hello)))
    );
}

#[test]
fn a_resumed_connection_that_never_commits_again_is_dropped_and_waited_for() {
    let t0 = Instant::now();
    let mut host = Session::new(config(Role::Host), t0);
    host.handle(Input::Connected(CONN), t0);
    let key = common::KEY;
    host.handle(
        Input::Line(CONN, format!("HELLO bingo/1 key={key} verify resume")),
        t0,
    );
    host.handle(Input::Line(CONN, format!("COMMIT {}", "0".repeat(64))), t0);
    host.handle(Input::Closed(CONN), t0);
    assert!(host.is_suspended());
    let back = ConnId(10);
    host.handle(Input::Connected(back), t0);
    host.handle(Input::Line(back, format!("RESUME game-1 0 {key}")), t0);
    drain(&mut host);
    assert!(!host.is_suspended(), "resumed, waiting for the COMMIT");
    let rejoin = Limits::default().rejoin;
    assert_eq!(host.poll_timeout(), Some(t0 + rejoin));
    let outputs = run_to(&mut host, t0 + rejoin);
    assert!(outputs.contains(&Output::Close(back)));
    assert!(
        host.is_suspended(),
        "the game waits again, with a fresh grace"
    );
    assert_eq!(
        host.poll_timeout(),
        Some(t0 + rejoin + Limits::default().resume_grace)
    );
}
