//! `resume` at the level of the state machines: each way a line can be lost
//! in a drop, and the connections a suspended host must turn away.

use bingo::card::Card;
use bingo::message::Extensions;
use bingo::session::{Action, CardChoice, Config, Ending, Event, GameEvent, Limits, Session};
use bingo::settings::{Role, Settings};

fn session(role: Role) -> Session {
    Session::new(Config {
        role,
        card: CardChoice::Given(Card::parse("1 2 3\n4 5 6\n7 8 9").unwrap()),
        ..session_config()
    })
}

fn lines(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|action| match action {
            Action::Send(message) => Some(message.to_string()),
            _ => None,
        })
        .collect()
}

/// Delivers `lines` to `to` and returns what it sends back.
fn deliver(to: &mut Session, sent: &[String]) -> Vec<String> {
    sent.iter()
        .flat_map(|line| lines(&to.handle(Event::Line(line.clone()))))
        .collect()
}

/// A host and a guest past the handshake and the commitments.
fn started() -> (Session, Session) {
    let mut host = session(Role::Host);
    let mut guest = session(Role::Guest);
    let hello = lines(&host.handle(Event::Connected));
    let reply = deliver(&mut guest, &hello);
    let commit = deliver(&mut host, &reply);
    assert!(deliver(&mut guest, &commit).is_empty());
    assert!(host.is_my_turn());
    (host, guest)
}

fn drop_connection(host: &mut Session, guest: &mut Session) {
    for side in [&mut *host, &mut *guest] {
        let actions = side.handle(Event::Closed);
        assert!(actions.contains(&Action::Report(GameEvent::Suspended)));
        assert!(side.is_suspended());
    }
}

/// Reconnects and runs the RESUME exchange; returns what each side sent
/// after its RESUME.
fn reconnect(host: &mut Session, guest: &mut Session) -> (Vec<String>, Vec<String>) {
    assert!(guest.handle(Event::Connected).is_empty());
    let hello = lines(&host.handle(Event::Connected));
    assert!(hello[0].contains("id=game-1"), "{hello:?}");
    let resume = deliver(guest, &hello);
    let host_reply = deliver(host, &resume);
    let guest_reply = deliver(guest, &host_reply);
    (host_reply, guest_reply)
}

fn numbers(session: &Session) -> Vec<u16> {
    session.calls().iter().map(|call| call.number).collect()
}

#[test]
fn the_guest_missed_the_hosts_call() {
    let (mut host, mut guest) = started();
    let lost = lines(&host.handle(Event::Call(1)));
    assert_eq!(lost, ["CALL 1"]);
    drop_connection(&mut host, &mut guest);
    let (host_reply, guest_reply) = reconnect(&mut host, &mut guest);
    assert_eq!(host_reply, ["RESUME game-1 1", "CALL 1"]);
    assert!(guest_reply.is_empty());
    assert!(guest.is_my_turn());
    assert_eq!(numbers(&guest), [1]);
    assert_eq!(host.resumes(), 1);
}

#[test]
fn the_host_missed_the_guests_call() {
    let (mut host, mut guest) = started();
    let call = lines(&host.handle(Event::Call(1)));
    deliver(&mut guest, &call);
    let lost = lines(&guest.handle(Event::Call(5)));
    assert_eq!(lost, ["CALL 5"]);
    drop_connection(&mut host, &mut guest);
    let (host_reply, guest_reply) = reconnect(&mut host, &mut guest);
    assert_eq!(host_reply, ["RESUME game-1 1"]);
    assert_eq!(guest_reply, ["CALL 5"], "the guest sends its call again");
    deliver(&mut host, &guest_reply);
    assert!(host.is_my_turn());
    assert_eq!(numbers(&host), [1, 5]);
}

#[test]
fn nothing_was_lost() {
    let (mut host, mut guest) = started();
    let call = lines(&host.handle(Event::Call(1)));
    deliver(&mut guest, &call);
    drop_connection(&mut host, &mut guest);
    let (host_reply, guest_reply) = reconnect(&mut host, &mut guest);
    assert_eq!(host_reply, ["RESUME game-1 1"]);
    assert!(guest_reply.is_empty());
    assert!(guest.is_my_turn());
    // And the game goes on to its end.
    let call = lines(&guest.handle(Event::Call(4)));
    deliver(&mut host, &call);
    let call = lines(&host.handle(Event::Call(2)));
    deliver(&mut guest, &call);
    let last = lines(&guest.handle(Event::Call(3)));
    assert_eq!(last, ["FINAL 3"]);
    let answer = deliver(&mut host, &last);
    assert_eq!(answer[0], "TIE");
}

#[test]
fn a_suspended_host_turns_away_other_connections() {
    let (mut host, mut guest) = started();
    drop_connection(&mut host, &mut guest);
    // A new guest saying HELLO, then a RESUME with the wrong id.
    for intruder in ["HELLO bingo/1", "RESUME other-game 0", "RESUME game-1 7"] {
        host.handle(Event::Connected);
        let actions = host.handle(Event::Line(intruder.into()));
        assert!(
            lines(&actions)[0].starts_with("ERROR"),
            "{intruder}: {actions:?}"
        );
        assert!(actions.contains(&Action::Close));
        assert!(host.is_suspended(), "the game still waits after {intruder}");
    }
    let (host_reply, _) = reconnect(&mut host, &mut guest);
    assert_eq!(host_reply, ["RESUME game-1 0"]);
    assert!(host.is_my_turn());
}

#[test]
fn the_grace_runs_out() {
    let (mut host, mut guest) = started();
    drop_connection(&mut host, &mut guest);
    host.handle(Event::IdleTimeout);
    assert!(matches!(host.ending(), Some(Ending::Disconnected(_))));
}

#[test]
fn without_resume_a_drop_ends_the_game() {
    let mut host = Session::new(Config {
        extensions: Extensions::default(),
        ..session_config()
    });
    host.handle(Event::Connected);
    host.handle(Event::Line("HELLO bingo/1 verify resume".into()));
    host.handle(Event::Closed);
    assert!(matches!(host.ending(), Some(Ending::Disconnected(_))));
}

fn session_config() -> Config {
    Config {
        role: Role::Host,
        settings: Settings::new(3, 1, Role::Host).unwrap(),
        card: CardChoice::Shuffled(1),
        extensions: Extensions::ALL,
        game_id: "game-1".into(),
        salt: "00".into(),
        limits: Limits::default(),
    }
}

/// Plays host 1, guest 4, host 2, then the guest's FINAL 3 (both cards have
/// the row 1 2 3, so the host answers TIE). Returns the host's answer lines,
/// not yet delivered.
fn play_to_the_final_answer(host: &mut Session, guest: &mut Session) -> Vec<String> {
    for (caller, k) in [(Role::Host, 1), (Role::Guest, 4), (Role::Host, 2)] {
        let (from, to) = match caller {
            Role::Host => (&mut *host, &mut *guest),
            Role::Guest => (&mut *guest, &mut *host),
        };
        let call = lines(&from.handle(Event::Call(k)));
        assert!(deliver(to, &call).is_empty());
    }
    let last = lines(&guest.handle(Event::Call(3)));
    assert_eq!(last, ["FINAL 3"]);
    let answer = deliver(host, &last);
    assert_eq!(answer[0], "TIE");
    assert!(answer[1].starts_with("REVEAL "));
    answer
}

fn verified_draw(session: &Session) -> bool {
    matches!(
        session.ending(),
        Some(Ending::Result { outcome, verification: bingo::Verification::Verified })
            if outcome.result == bingo::GameResult::Draw
    )
}

#[test]
fn the_final_answer_was_lost() {
    let (mut host, mut guest) = started();
    play_to_the_final_answer(&mut host, &mut guest);
    drop_connection(&mut host, &mut guest);
    let (host_reply, guest_reply) = reconnect(&mut host, &mut guest);
    assert_eq!(host_reply[..2], ["RESUME game-1 5", "TIE"]);
    assert!(host_reply[2].starts_with("REVEAL "));
    assert!(guest_reply[0].starts_with("REVEAL "));
    deliver(&mut host, &guest_reply);
    assert!(verified_draw(&host), "{:?}", host.ending());
    assert!(verified_draw(&guest), "{:?}", guest.ending());
}

#[test]
fn the_reveals_were_lost() {
    let (mut host, mut guest) = started();
    let answer = play_to_the_final_answer(&mut host, &mut guest);
    let guest_reveal = deliver(&mut guest, &answer[..1]);
    assert!(guest_reveal[0].starts_with("REVEAL "), "the guest decided");
    drop_connection(&mut host, &mut guest);
    let (host_reply, guest_reply) = reconnect(&mut host, &mut guest);
    assert_eq!(host_reply[0], "RESUME game-1 5");
    assert!(host_reply[1].starts_with("REVEAL "));
    deliver(&mut host, &guest_reply);
    assert!(verified_draw(&host), "{:?}", host.ending());
    assert!(verified_draw(&guest), "{:?}", guest.ending());
}

#[test]
fn a_guest_finds_another_game_and_leaves_it_alone() {
    let (mut host, mut guest) = started();
    drop_connection(&mut host, &mut guest);
    guest.handle(Event::Connected);
    let actions = guest.handle(Event::Line(
        "HELLO bingo/1 size=3 lines=1 first=host id=game-2 verify resume".into(),
    ));
    assert!(
        lines(&actions).is_empty(),
        "no ERROR to the new game: {actions:?}"
    );
    assert!(actions.contains(&Action::Close));
    assert!(matches!(guest.ending(), Some(Ending::Disconnected(_))));
}
