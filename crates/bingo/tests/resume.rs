//! `resume` at the level of the state machines, on a simulated wire and
//! clock: each way a line can be lost in a drop (the COMMITs included), the
//! guest's key, strangers and squatters at a suspended host, and the guest
//! retrying until its grace runs out.

mod common;

use std::time::Duration;

use bingo::session::{
    Disconnect, Ending, GameEvent, GameResult, Input, Limits, Output, Session, Verification,
};
use bingo::settings::Role;
use bingo::violation::Violation;
use common::{KEY, Pair, config, drain, lines};

fn numbers(session: &Session) -> Vec<u16> {
    session.calls().iter().map(|call| call.number).collect()
}

/// Lines of the resume handshake and after, without the COMMITs sent again.
fn after_commits(wire: &[(Role, String)]) -> Vec<String> {
    wire.iter()
        .filter(|(_, line)| !line.starts_with("COMMIT"))
        .map(|(role, line)| format!("{role}: {line}"))
        .collect()
}

fn suspended(pair: &Pair) {
    assert!(pair.host.is_suspended(), "{:?}", pair.host.ending());
    assert!(pair.guest.is_suspended(), "{:?}", pair.guest.ending());
}

#[test]
fn the_guest_missed_the_hosts_call() {
    let mut pair = Pair::started();
    pair.reachable = false;
    let lost = pair.act_then_cut(Role::Host, Input::Call(1));
    assert_eq!(lost, ["CALL 1"]);
    pair.pump();
    suspended(&pair);
    pair.reachable = true;
    pair.advance(Limits::default().retry);
    let wire = pair.pump();
    let wire = [pair.wire.clone(), wire].concat();
    let tail: Vec<String> = after_commits(&wire)
        .into_iter()
        .skip_while(|line| !line.contains("HELLO bingo/1 resume"))
        .collect();
    assert_eq!(
        tail,
        [
            "host: HELLO bingo/1 resume".to_owned(),
            format!("guest: RESUME game-1 0 {KEY}"),
            "host: RESUME game-1 1".to_owned(),
            "host: CALL 1".to_owned(),
        ]
    );
    assert!(pair.guest.is_my_turn());
    assert_eq!(numbers(&pair.guest), [1]);
    assert_eq!(pair.host.resumes(), 1);
}

#[test]
fn the_host_missed_the_guests_call() {
    let mut pair = Pair::started();
    pair.input(Role::Host, Input::Call(1));
    let lost = pair.act_then_cut(Role::Guest, Input::Call(5));
    assert_eq!(lost, ["CALL 5"]);
    let wire = pair.pump();
    let resent: Vec<&str> = wire
        .iter()
        .filter(|(role, _)| *role == Role::Guest)
        .map(|(_, line)| line.as_str())
        .filter(|line| line.starts_with("CALL"))
        .collect();
    assert_eq!(resent, ["CALL 5"], "the guest sends its call again");
    assert!(pair.host.is_my_turn());
    assert_eq!(numbers(&pair.host), [1, 5]);
}

#[test]
fn nothing_was_lost_and_the_game_goes_on() {
    let mut pair = Pair::started();
    pair.input(Role::Host, Input::Call(1));
    pair.cut();
    pair.pump();
    assert!(pair.guest.is_my_turn());
    assert_eq!(pair.guest.resumes(), 1);
    pair.input(Role::Guest, Input::Call(4));
    pair.input(Role::Host, Input::Call(2));
    let last = pair.input(Role::Guest, Input::Call(3));
    assert_eq!(last[0], (Role::Guest, "FINAL 3".into()));
    assert_eq!(last[1], (Role::Host, "TIE".into()));
    assert!(verified_draw(&pair.host), "{:?}", pair.host.ending());
    assert!(verified_draw(&pair.guest), "{:?}", pair.guest.ending());
}

#[test]
fn a_drop_during_the_commit_exchange_is_resumed() {
    // The host's HELLO gets through, its COMMIT does not.
    let mut pair = Pair::new(config(Role::Host), config(Role::Guest));
    pair.cut_after = Some((Role::Host, 1));
    // The guest reconnects at once.
    pair.pump();
    assert_eq!(pair.host.resumes(), 1);
    assert!(pair.host.is_my_turn(), "{:?}", pair.host.ending());
    assert!(!pair.guest.is_suspended());
    let last = pair.input(Role::Host, Input::Call(1));
    assert_eq!(last[0], (Role::Host, "CALL 1".into()));
    pair.input(Role::Guest, Input::Call(4));
    pair.input(Role::Host, Input::Call(2));
    pair.input(Role::Guest, Input::Call(5));
    pair.input(Role::Host, Input::Call(3));
    // The check after the game needs the COMMIT that was lost.
    assert!(
        matches!(
            pair.guest.ending(),
            Some(Ending::Result {
                verification: Verification::Verified,
                ..
            })
        ),
        "{:?}",
        pair.guest.ending()
    );
}

#[test]
fn a_changed_commit_after_a_resume_is_a_violation() {
    let mut pair = Pair::started();
    pair.cut();
    // The guest's first line after the host's RESUME: a COMMIT to another card.
    let mut host = pair.host;
    let id = bingo::ConnId(77);
    host.handle(Input::Connected(id), pair.now);
    host.handle(Input::Line(id, format!("RESUME game-1 0 {KEY}")), pair.now);
    host.handle(
        Input::Line(id, format!("COMMIT {}", "ab".repeat(32))),
        pair.now,
    );
    assert_eq!(
        host.ending(),
        Some(&Ending::Violation(Violation::CommitChanged))
    );
}

#[test]
fn a_stranger_learns_nothing_and_cannot_take_the_game() {
    let mut pair = Pair::started();
    pair.input(Role::Host, Input::Call(1));
    pair.reachable = false;
    pair.cut();
    pair.pump();
    let other_key = "f".repeat(32);
    let attempts = [
        format!("RESUME game-1 1 {other_key}"),
        "RESUME game-1 1".to_owned(),
        format!("RESUME game-2 1 {KEY}"),
    ];
    for attempt in &attempts {
        let id = pair.stranger();
        pair.input(Role::Host, Input::Line(id, attempt.clone()));
        assert_eq!(
            pair.sent_to(id),
            [
                "HELLO bingo/1 resume".to_owned(),
                format!("ERROR {}", Violation::NoSuchGame)
            ],
            "{attempt}: the greeting and the refusal say nothing of the game"
        );
        assert!(pair.closed(id));
        assert!(
            pair.host.is_suspended(),
            "the game still waits after {attempt}"
        );
    }
    // A new player saying HELLO is told why in plain words.
    let id = pair.stranger();
    pair.input(Role::Host, Input::Line(id, "HELLO bingo/1".into()));
    assert_eq!(pair.sent_to(id)[1], format!("ERROR {}", Violation::Busy));
    // The real guest comes back.
    pair.reachable = true;
    pair.advance(Limits::default().retry);
    assert!(pair.guest.is_my_turn());
    assert!(!pair.host.is_suspended());
}

#[test]
fn a_silent_connection_does_not_delay_the_real_guest() {
    let mut pair = Pair::started();
    pair.reachable = false;
    pair.cut();
    pair.pump();
    let squatter = pair.stranger();
    let second = pair.stranger();
    pair.reachable = true;
    pair.advance(Limits::default().retry);
    assert!(
        pair.host.is_my_turn(),
        "resumed while two connections sat silent"
    );
    assert!(pair.closed(squatter) && pair.closed(second));
    let joined: Vec<&Output> = pair
        .log
        .iter()
        .filter(|(role, output)| {
            *role == Role::Host && matches!(output, Output::Report(GameEvent::Joined(_)))
        })
        .map(|(_, output)| output)
        .collect();
    assert_eq!(
        joined.len(),
        2,
        "the first join and the resume only: {joined:?}"
    );
}

#[test]
fn each_rejoin_attempt_has_its_own_short_limit() {
    let mut pair = Pair::started();
    pair.reachable = false;
    pair.cut();
    pair.pump();
    let limits = Limits::default();
    let first = pair.stranger();
    pair.advance(limits.rejoin / 2);
    let second = pair.stranger();
    pair.advance(limits.rejoin / 2);
    assert!(pair.closed(first));
    assert_eq!(
        pair.sent_to(first).last(),
        Some(&format!("ERROR {}", Violation::Silence(limits.rejoin)))
    );
    assert!(
        !pair.closed(second),
        "the second attempt keeps its own time"
    );
    pair.advance(limits.rejoin / 2);
    assert!(pair.closed(second));
    assert!(pair.host.is_suspended());
}

#[test]
fn the_oldest_attempt_gives_way_when_too_many_are_open() {
    let mut pair = Pair::started();
    pair.reachable = false;
    pair.cut();
    pair.pump();
    let ids: Vec<_> = (0..=bingo::session::MAX_REJOIN_ATTEMPTS)
        .map(|_| pair.stranger())
        .collect();
    pair.pump();
    assert!(pair.closed(ids[0]));
    assert!(!pair.closed(ids[1]));
}

#[test]
fn the_guest_keeps_trying_until_its_grace_runs_out() {
    let mut pair = Pair::started();
    pair.reachable = false;
    pair.cut();
    pair.pump();
    let limits = Limits::default();
    pair.advance(limits.resume_grace - Duration::from_secs(1));
    suspended(&pair);
    let tries = pair
        .log
        .iter()
        .filter(|(_, output)| matches!(output, Output::Connect(_)))
        .count();
    assert!(tries > 100, "one try every {:?}: {tries}", limits.retry);
    pair.advance(Duration::from_secs(1));
    let gone = Ending::Disconnected(Disconnect::NotResumed(limits.resume_grace));
    assert_eq!(pair.guest.ending(), Some(&gone));
    assert_eq!(pair.host.ending(), Some(&gone));
}

#[test]
fn a_connect_that_hangs_is_given_up_and_tried_again() {
    let mut pair = Pair::started();
    pair.hang = true;
    pair.cut();
    pair.pump();
    let limits = Limits::default();
    pair.advance(limits.connect);
    assert!(
        pair.log
            .iter()
            .any(|(role, output)| *role == Role::Guest && matches!(output, Output::Close(_))),
        "the hanging attempt is abandoned"
    );
    pair.hang = false;
    pair.advance(limits.retry);
    assert!(pair.host.is_my_turn());
    assert_eq!(pair.guest.resumes(), 1);
}

#[test]
fn a_restarted_guest_is_told_why_and_is_not_taken_for_the_player() {
    let mut pair = Pair::started();
    pair.cut();
    // The old guest's process is gone; a new one starts.
    pair.guest = Session::new(config(Role::Guest), pair.now);
    pair.pump();
    assert_eq!(
        pair.guest.ending(),
        Some(&Ending::Disconnected(Disconnect::HostBusy))
    );
    assert!(pair.host.is_suspended());
    let joins = pair
        .log
        .iter()
        .filter(|(role, output)| {
            *role == Role::Host && matches!(output, Output::Report(GameEvent::Joined(_)))
        })
        .count();
    assert_eq!(joins, 1, "only the first guest joined");
}

fn verified_draw(session: &Session) -> bool {
    matches!(
        session.ending(),
        Some(Ending::Result { outcome, verification: Verification::Verified })
            if outcome.result == GameResult::Draw
    )
}

/// Plays host 1, guest 4, host 2; the guest's FINAL 3 follows (both cards
/// have the row 1 2 3, so the host answers TIE).
fn to_the_final_call(pair: &mut Pair) {
    pair.input(Role::Host, Input::Call(1));
    pair.input(Role::Guest, Input::Call(4));
    pair.input(Role::Host, Input::Call(2));
}

#[test]
fn the_final_answer_was_lost() {
    let mut pair = Pair::started();
    to_the_final_call(&mut pair);
    pair.cut_after = Some((Role::Host, pair.count(Role::Host)));
    pair.input(Role::Guest, Input::Call(3));
    // Reconnected at once: the host sends TIE again, then both REVEAL.
    assert!(verified_draw(&pair.host), "{:?}", pair.host.ending());
    assert!(verified_draw(&pair.guest), "{:?}", pair.guest.ending());
    assert_eq!(pair.host.resumes(), 1);
}

#[test]
fn the_reveals_were_lost() {
    let mut pair = Pair::started();
    to_the_final_call(&mut pair);
    pair.cut_after = Some((Role::Host, pair.count(Role::Host) + 1));
    pair.input(Role::Guest, Input::Call(3));
    assert!(verified_draw(&pair.host), "{:?}", pair.host.ending());
    assert!(verified_draw(&pair.guest), "{:?}", pair.guest.ending());
    assert_eq!(pair.guest.resumes(), 1);
}

#[test]
fn a_dropped_reveal_waits_only_the_reveal_limit() {
    let mut pair = Pair::started();
    to_the_final_call(&mut pair);
    pair.reachable = false;
    pair.cut_after = Some((Role::Host, pair.count(Role::Host) + 1));
    pair.input(Role::Guest, Input::Call(3));
    suspended(&pair);
    pair.advance(Limits::default().close);
    for side in [&pair.host, &pair.guest] {
        assert!(
            matches!(
                side.ending(),
                Some(Ending::Result { outcome, verification: Verification::Missing(_) })
                    if outcome.result == GameResult::Draw
            ),
            "{:?}",
            side.ending()
        );
    }
}

#[test]
fn a_guest_finds_another_game_and_leaves_it_alone() {
    let mut pair = Pair::started();
    pair.hang = true;
    pair.cut();
    let mut guest = pair.guest;
    let connect = drain(&mut guest)
        .into_iter()
        .find_map(|output| match output {
            Output::Connect(id) => Some(id),
            _ => None,
        })
        .unwrap();
    guest.handle(Input::Connected(connect), pair.now);
    guest.handle(
        Input::Line(
            connect,
            "HELLO bingo/1 size=3 lines=1 first=host id=game-2 verify resume".into(),
        ),
        pair.now,
    );
    let outputs = drain(&mut guest);
    assert!(
        lines(&outputs).is_empty(),
        "no ERROR to the new game: {outputs:?}"
    );
    assert!(outputs.contains(&Output::Close(connect)));
    assert_eq!(
        guest.ending(),
        Some(&Ending::Disconnected(Disconnect::GameGone))
    );
}

#[test]
fn without_resume_a_drop_ends_the_game() {
    let mut host_config = config(Role::Host);
    host_config.extensions = bingo::Extensions::default();
    let mut pair = Pair::new(host_config, config(Role::Guest));
    pair.pump();
    pair.cut();
    assert_eq!(
        pair.host.ending(),
        Some(&Ending::Disconnected(Disconnect::Closed))
    );
}

#[test]
fn a_guest_without_a_key_gets_no_resume() {
    let mut host = Session::new(config(Role::Host), std::time::Instant::now());
    let id = bingo::ConnId(1);
    host.handle(Input::Connected(id), std::time::Instant::now());
    host.handle(
        Input::Line(id, "HELLO bingo/1 verify resume".into()),
        std::time::Instant::now(),
    );
    assert!(!host.extensions().resume);
    assert!(host.extensions().verify);
}
