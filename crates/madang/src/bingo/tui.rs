//! The terminal UI: draws the [`View`] and turns keys into game input.

use std::time::Duration;

use anyhow::{Context, Result};
use bingo::Role;
use bingo_net::{Update, UserInput};
use crossterm::event::{self, Event, KeyEventKind};
use ratatui::DefaultTerminal;
use tokio::sync::mpsc::{self, error::TryRecvError};

use super::view::{self, Command, View};

/// How often the screen catches up with the network when no key is pressed.
const TICK: Duration = Duration::from_millis(50);

/// Runs the UI until the player leaves; restores the terminal on the way out.
pub fn run(
    role: Role,
    updates: mpsc::Receiver<Update>,
    input: mpsc::UnboundedSender<UserInput>,
) -> Result<()> {
    let mut terminal = ratatui::try_init().context("cannot set up the terminal")?;
    let result = event_loop(&mut terminal, View::new(role), updates, input);
    ratatui::restore();
    result
}

fn event_loop(
    terminal: &mut DefaultTerminal,
    mut view: View,
    mut updates: mpsc::Receiver<Update>,
    input: mpsc::UnboundedSender<UserInput>,
) -> Result<()> {
    loop {
        loop {
            match updates.try_recv() {
                Ok(update) => view.apply(update),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    view.network_done();
                    break;
                }
            }
        }
        terminal.draw(|frame| view::render(frame, &view))?;
        if !event::poll(TICK)? {
            continue;
        }
        if let Event::Key(key) = event::read()?
            && key.kind == KeyEventKind::Press
        {
            match view.key(key) {
                Command::None => {}
                // The game may be over already; then nobody listens.
                Command::Send(message) => {
                    let _ = input.send(message);
                }
                Command::Quit => {
                    let _ = input.send(UserInput::Quit);
                    return Ok(());
                }
            }
        }
    }
}
