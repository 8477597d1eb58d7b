//! Two sessions wired back to back in memory: a whole game without sockets,
//! for tests, benchmarks and checking the protocol against itself.

use std::collections::VecDeque;
use std::time::Instant;

use crate::card::Board;
use crate::event::{ConnId, GameEvent, Input, Output};
use crate::outcome::Side;
use crate::session::Session;
use crate::settings::Role;

/// The host's number for the one connection.
const HOST_CONN: ConnId = ConnId(0);

/// Connects `host` and `guest` (the guest asks, the host accepts), delivers
/// every line each sends to the other, all at the instant `now`, and
/// whenever one has the turn calls the number `pick` chooses for it from its
/// board. Returns every line sent, with its sender, in order.
pub fn play(
    host: &mut Session,
    guest: &mut Session,
    now: Instant,
    mut pick: impl FnMut(Role, &Board) -> Option<u16>,
) -> Vec<(Role, String)> {
    let mut wire = Vec::new();
    let mut guest_conn = HOST_CONN;
    let mut queue = VecDeque::new();
    loop {
        for role in [Role::Host, Role::Guest] {
            let session = match role {
                Role::Host => &mut *host,
                Role::Guest => &mut *guest,
            };
            while let Some(output) = session.poll_output() {
                match output {
                    Output::Connect(id) => {
                        guest_conn = id;
                        queue.push_back((Role::Host, Input::Connected(HOST_CONN)));
                        queue.push_back((Role::Guest, Input::Connected(id)));
                    }
                    Output::Send(_, message) => {
                        let line = message.to_string();
                        wire.push((role, line.clone()));
                        let to = match role {
                            Role::Host => (Role::Guest, guest_conn),
                            Role::Guest => (Role::Host, HOST_CONN),
                        };
                        queue.push_back((to.0, Input::Line(to.1, line)));
                    }
                    Output::Report(GameEvent::Turn(Side::Me)) => {
                        if let Some(k) = session.board().and_then(|board| pick(role, board)) {
                            queue.push_back((role, Input::Call(k)));
                        }
                    }
                    Output::Close(_) | Output::Report(_) => {}
                }
            }
        }
        let Some((role, input)) = queue.pop_front() else {
            return wire;
        };
        match role {
            Role::Host => host.handle(input, now),
            Role::Guest => guest.handle(input, now),
        }
    }
}
