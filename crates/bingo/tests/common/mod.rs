//! A simulated wire and clock for two sessions: the harness of every
//! state-machine test (as the referee's harness is for its table). Nothing
//! here sleeps: time moves only when a test says so.

#![allow(dead_code)] // each test file uses its own part of the harness

use std::time::{Duration, Instant};

use bingo::card::Card;
use bingo::message::Extensions;
use bingo::session::{CardChoice, Config, ConnId, Input, Limits, Output, Session};
use bingo::settings::{Role, Settings};

/// The guest's resume key in every test.
pub const KEY: &str = "0123456789abcdef0123456789abcdef";

/// A 3x3 game, one line to win, the host first, both extensions, the card
/// `1 2 3 / 4 5 6 / 7 8 9`.
pub fn config(role: Role) -> Config {
    Config {
        role,
        settings: Settings::new(3, 1, Role::Host).unwrap(),
        card: CardChoice::Given(Card::parse("1 2 3\n4 5 6\n7 8 9").unwrap()),
        extensions: Extensions::ALL,
        game_id: "game-1".into(),
        resume_key: KEY.into(),
        salt: "00".into(),
        limits: Limits::default(),
    }
}

/// Everything `session` has to say, in order.
pub fn drain(session: &mut Session) -> Vec<Output> {
    std::iter::from_fn(|| session.poll_output()).collect()
}

/// The lines among `outputs`.
pub fn lines(outputs: &[Output]) -> Vec<String> {
    outputs
        .iter()
        .filter_map(|output| match output {
            Output::Send(_, message) => Some(message.to_string()),
            _ => None,
        })
        .collect()
}

/// A host and a guest on a simulated connection and clock.
pub struct Pair {
    /// The listening side.
    pub host: Session,
    /// The connecting side.
    pub guest: Session,
    /// The simulated time.
    pub now: Instant,
    /// Whether the guest's connects succeed (else they are refused).
    pub reachable: bool,
    /// Whether the guest's connects hang, neither up nor refused.
    pub hang: bool,
    /// Lose every line `role` sends after its first `n` (counted over the
    /// whole test) and cut the connection then.
    pub cut_after: Option<(Role, usize)>,
    /// The connection between them: the host's id and the guest's.
    link: Option<(ConnId, ConnId)>,
    next_host_id: u64,
    /// Every output so far, with the role that made it, and whether it was
    /// delivered (for lines).
    pub log: Vec<(Role, Output)>,
    /// Every line delivered, with its sender.
    pub wire: Vec<(Role, String)>,
}

impl Pair {
    /// Two sessions at one instant; nothing delivered yet.
    pub fn new(host: Config, guest: Config) -> Pair {
        let now = Instant::now();
        Pair {
            host: Session::new(host, now),
            guest: Session::new(guest, now),
            now,
            reachable: true,
            hang: false,
            cut_after: None,
            link: None,
            next_host_id: 0,
            log: Vec::new(),
            wire: Vec::new(),
        }
    }

    /// A pair past the handshake (and the commitments): the host's turn.
    pub fn started() -> Pair {
        let mut pair = Pair::new(config(Role::Host), config(Role::Guest));
        pair.pump();
        assert!(pair.host.is_my_turn(), "{:?}", pair.log);
        pair
    }

    /// A fresh connection to the host from someone else: its id.
    pub fn stranger(&mut self) -> ConnId {
        let id = self.next_id();
        self.host.handle(Input::Connected(id), self.now);
        id
    }

    fn next_id(&mut self) -> ConnId {
        self.next_host_id += 1;
        ConnId(1000 + self.next_host_id)
    }

    /// Delivers what both sides send, until neither has more; returns the
    /// lines delivered by this call.
    pub fn pump(&mut self) -> Vec<(Role, String)> {
        let start = self.wire.len();
        loop {
            let mut moved = false;
            while let Some(output) = self.host.poll_output() {
                moved = true;
                self.route(Role::Host, output);
            }
            while let Some(output) = self.guest.poll_output() {
                moved = true;
                self.route(Role::Guest, output);
            }
            if !moved {
                return self.wire[start..].to_vec();
            }
        }
    }

    /// The lines `role` sends to `id` (a stranger's connection) so far.
    pub fn sent_to(&self, id: ConnId) -> Vec<String> {
        self.log
            .iter()
            .filter_map(|(_, output)| match output {
                Output::Send(to, message) if *to == id => Some(message.to_string()),
                _ => None,
            })
            .collect()
    }

    /// Whether `id` was closed.
    pub fn closed(&self, id: ConnId) -> bool {
        self.log
            .iter()
            .any(|(_, output)| *output == Output::Close(id))
    }

    fn route(&mut self, role: Role, output: Output) {
        let now = self.now;
        match (&output, role, self.link) {
            (Output::Connect(_), _, _) if self.hang => {}
            (Output::Send(..), _, Some(_)) if self.cut_is_due(role) => {
                self.cut_after = None;
                self.cut();
            }
            (Output::Connect(guest_id), _, _) => {
                if self.reachable {
                    let host_id = self.next_id();
                    self.link = Some((host_id, *guest_id));
                    self.host.handle(Input::Connected(host_id), now);
                    self.guest.handle(Input::Connected(*guest_id), now);
                } else {
                    let refused = Input::ConnectFailed(*guest_id, "refused".into());
                    self.guest.handle(refused, now);
                }
            }
            (Output::Send(id, message), Role::Host, Some((h, g))) if *id == h => {
                self.wire.push((role, message.to_string()));
                self.guest.handle(Input::Line(g, message.to_string()), now);
            }
            (Output::Send(id, message), Role::Guest, Some((h, g))) if *id == g => {
                self.wire.push((role, message.to_string()));
                self.host.handle(Input::Line(h, message.to_string()), now);
            }
            (Output::Close(id), Role::Host, Some((h, g))) if *id == h => {
                self.link = None;
                self.guest.handle(Input::Closed(g), now);
            }
            (Output::Close(id), Role::Guest, Some((h, g))) if *id == g => {
                self.link = None;
                self.host.handle(Input::Closed(h), now);
            }
            _ => {}
        }
        self.log.push((role, output));
    }

    /// How many lines `role` has had delivered.
    pub fn count(&self, role: Role) -> usize {
        self.wire.iter().filter(|(from, _)| *from == role).count()
    }

    fn cut_is_due(&self, role: Role) -> bool {
        self.cut_after
            .is_some_and(|(from, n)| from == role && self.count(role) >= n)
    }

    /// Lets `role` act, loses whatever it sends, and cuts the connection:
    /// both sides see it close.
    pub fn act_then_cut(&mut self, role: Role, input: Input) -> Vec<String> {
        let session = match role {
            Role::Host => &mut self.host,
            Role::Guest => &mut self.guest,
        };
        session.handle(input, self.now);
        let lost = drain(session);
        let lost_lines = lines(&lost);
        self.log
            .extend(lost.into_iter().map(|output| (role, output)));
        self.cut();
        lost_lines
    }

    /// Cuts the connection: both sides see it close.
    pub fn cut(&mut self) {
        if let Some((h, g)) = self.link.take() {
            self.host.handle(Input::Closed(h), self.now);
            self.guest.handle(Input::Closed(g), self.now);
        }
    }

    /// Feeds an input to `role` and delivers the consequences.
    pub fn input(&mut self, role: Role, input: Input) -> Vec<(Role, String)> {
        match role {
            Role::Host => self.host.handle(input, self.now),
            Role::Guest => self.guest.handle(input, self.now),
        }
        self.pump()
    }

    /// Moves the clock on by `step`, firing every limit that falls due on
    /// the way (in order), and delivers the consequences.
    pub fn advance(&mut self, step: Duration) {
        let end = self.now + step;
        loop {
            let next = [self.host.poll_timeout(), self.guest.poll_timeout()]
                .into_iter()
                .flatten()
                .filter(|&at| at <= end)
                .min();
            let Some(at) = next else { break };
            self.now = at.max(self.now);
            if self.host.poll_timeout().is_some_and(|t| t <= self.now) {
                self.host.handle_timeout(self.now);
            }
            if self.guest.poll_timeout().is_some_and(|t| t <= self.now) {
                self.guest.handle_timeout(self.now);
            }
            self.pump();
        }
        self.now = end;
    }
}
