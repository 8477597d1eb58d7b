//! The 3-byte frames `[command, turn, data]` of both directions.
//!
//! Decoding checks only what a single frame can tell (command, and the
//! byte values each command allows); whether a frame makes sense at this
//! moment of the game is the state machines' business.

use thiserror::Error;

/// Length of every frame.
pub const FRAME_LEN: usize = 3;

/// Command byte values.
pub mod cmd {
    /// Connect (both directions).
    pub const CONNECT: u8 = 0;
    /// Ready (player to referee).
    pub const READY: u8 = 1;
    /// Update (referee to player).
    pub const UPDATE: u8 = 2;
    /// Put (player to referee).
    pub const PUT: u8 = 3;
    /// End (referee to player).
    pub const END: u8 = 4;
}

/// A frame that is not a valid message for its direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum FrameError {
    /// The command byte names no message of this direction.
    #[error("unknown command {0}")]
    UnknownCommand(u8),
    /// The command is known but a byte has a value it never takes.
    #[error("invalid frame {0:?}")]
    Invalid([u8; FRAME_LEN]),
}

/// A message from a player to the referee.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlayerMsg {
    /// `[0, 0, 0]`: asking to join.
    Connect,
    /// `[1, 0, 1]` ready, `[1, 0, 0]` ready withdrawn.
    Ready(bool),
    /// `[3, 0, p]`: a stone at the point byte `p`, which may be off the
    /// board (an illegal move, not an invalid frame).
    Put(u8),
}

impl PlayerMsg {
    /// Decodes a frame received by the referee; unused bytes are ignored.
    pub fn decode(frame: [u8; FRAME_LEN]) -> Result<PlayerMsg, FrameError> {
        let [command, _turn, data] = frame;
        match command {
            cmd::CONNECT => Ok(PlayerMsg::Connect),
            cmd::READY => match data {
                0 => Ok(PlayerMsg::Ready(false)),
                1 => Ok(PlayerMsg::Ready(true)),
                _ => Err(FrameError::Invalid(frame)),
            },
            cmd::PUT => Ok(PlayerMsg::Put(data)),
            other => Err(FrameError::UnknownCommand(other)),
        }
    }

    /// The frame's bytes, unused bytes sent as 0.
    pub fn encode(self) -> [u8; FRAME_LEN] {
        match self {
            PlayerMsg::Connect => [cmd::CONNECT, 0, 0],
            PlayerMsg::Ready(ready) => [cmd::READY, 0, u8::from(ready)],
            PlayerMsg::Put(p) => [cmd::PUT, 0, p],
        }
    }
}

/// The result an End frame announces to its receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndResult {
    /// Turn byte 0.
    Lost,
    /// Turn byte 1.
    Won,
    /// Turn byte 2 (extension).
    Draw,
}

/// A message from the referee to a player.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefereeMsg {
    /// `[0, seat, 1]` accepted as black (seat 0) or white (seat 1);
    /// `[0, n, 2]` refused.
    Connect {
        /// The seat given (or, when refused, the number of players seated).
        seat: u8,
        /// Whether the player was seated.
        accepted: bool,
    },
    /// `[2, t, data]`: `t` 0 means the receiver's turn; `data` is 0 in the
    /// game's first Update (the start signal), otherwise the point byte of
    /// the stone just placed.
    Update {
        /// Whether the receiver moves next.
        your_turn: bool,
        /// 0 at the start, else the point byte of the last stone.
        data: u8,
    },
    /// `[4, result, data]`: data 0 error, 1 timeout, otherwise the point of
    /// the stone that completed five (or, in a draw, the last stone).
    End {
        /// The receiver's result.
        result: EndResult,
        /// The reason or point byte.
        data: u8,
    },
}

impl RefereeMsg {
    /// Decodes a frame received by a player.
    pub fn decode(frame: [u8; FRAME_LEN]) -> Result<RefereeMsg, FrameError> {
        let [command, turn, data] = frame;
        let invalid = Err(FrameError::Invalid(frame));
        match command {
            cmd::CONNECT => match data {
                1 | 2 => Ok(RefereeMsg::Connect {
                    seat: turn,
                    accepted: data == 1,
                }),
                _ => invalid,
            },
            cmd::UPDATE => match turn {
                0 | 1 => Ok(RefereeMsg::Update {
                    your_turn: turn == 0,
                    data,
                }),
                _ => invalid,
            },
            cmd::END => {
                let result = match turn {
                    0 => EndResult::Lost,
                    1 => EndResult::Won,
                    2 => EndResult::Draw,
                    _ => return invalid,
                };
                Ok(RefereeMsg::End { result, data })
            }
            other => Err(FrameError::UnknownCommand(other)),
        }
    }

    /// The frame's bytes.
    pub fn encode(self) -> [u8; FRAME_LEN] {
        match self {
            RefereeMsg::Connect { seat, accepted } => {
                [cmd::CONNECT, seat, if accepted { 1 } else { 2 }]
            }
            RefereeMsg::Update { your_turn, data } => [cmd::UPDATE, u8::from(!your_turn), data],
            RefereeMsg::End { result, data } => {
                let t = match result {
                    EndResult::Lost => 0,
                    EndResult::Won => 1,
                    EndResult::Draw => 2,
                };
                [cmd::END, t, data]
            }
        }
    }
}

/// End's data byte for a game lost by an error.
pub const END_ERROR: u8 = 0;
/// End's data byte for a game lost on time.
pub const END_TIMEOUT: u8 = 1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn player_frames_round_trip() {
        for m in [
            PlayerMsg::Connect,
            PlayerMsg::Ready(true),
            PlayerMsg::Ready(false),
            PlayerMsg::Put(0x77),
            PlayerMsg::Put(0xff),
        ] {
            assert_eq!(PlayerMsg::decode(m.encode()), Ok(m));
        }
        assert_eq!(
            PlayerMsg::decode([1, 9, 2]),
            Err(FrameError::Invalid([1, 9, 2]))
        );
        assert_eq!(
            PlayerMsg::decode([2, 0, 0]),
            Err(FrameError::UnknownCommand(2))
        );
        assert_eq!(PlayerMsg::decode([0, 7, 9]), Ok(PlayerMsg::Connect));
    }

    #[test]
    fn referee_frames_round_trip() {
        let all = [
            RefereeMsg::Connect {
                seat: 0,
                accepted: true,
            },
            RefereeMsg::Connect {
                seat: 2,
                accepted: false,
            },
            RefereeMsg::Update {
                your_turn: true,
                data: 0,
            },
            RefereeMsg::Update {
                your_turn: false,
                data: 0x77,
            },
            RefereeMsg::End {
                result: EndResult::Draw,
                data: 0x12,
            },
            RefereeMsg::End {
                result: EndResult::Lost,
                data: END_TIMEOUT,
            },
        ];
        for m in all {
            assert_eq!(RefereeMsg::decode(m.encode()), Ok(m));
        }
        assert_eq!(
            RefereeMsg::Update {
                your_turn: true,
                data: 0
            }
            .encode(),
            [2, 0, 0]
        );
        assert_eq!(
            RefereeMsg::decode([4, 3, 0]),
            Err(FrameError::Invalid([4, 3, 0]))
        );
    }
}
