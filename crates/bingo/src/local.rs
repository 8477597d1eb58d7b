//! Two sessions wired back to back in memory: a whole game without sockets,
//! for tests, benchmarks and checking the protocol against itself.

use std::collections::VecDeque;

use crate::card::Board;
use crate::event::{Action, Event, GameEvent};
use crate::outcome::Side;
use crate::session::Session;
use crate::settings::Role;

/// Connects `host` and `guest`, delivers every line each sends to the other,
/// and whenever one has the turn calls the number `pick` chooses for it from
/// its board. Returns every line sent, with its sender, in order.
pub fn play(
    host: &mut Session,
    guest: &mut Session,
    mut pick: impl FnMut(Role, &Board) -> Option<u16>,
) -> Vec<(Role, String)> {
    let mut wire = Vec::new();
    let mut queue = VecDeque::from([(Role::Host, Event::Connected)]);
    while let Some((role, event)) = queue.pop_front() {
        let session = match role {
            Role::Host => &mut *host,
            Role::Guest => &mut *guest,
        };
        for action in session.handle(event) {
            match action {
                Action::Send(message) => {
                    let line = message.to_string();
                    wire.push((role, line.clone()));
                    queue.push_back((role.other(), Event::Line(line)));
                }
                Action::Report(GameEvent::Turn(Side::Me)) => {
                    let board = session.board().expect("a turn comes after the board");
                    if let Some(k) = pick(role, board) {
                        queue.push_back((role, Event::Call(k)));
                    }
                }
                _ => {}
            }
        }
    }
    wire
}
