//! `--auto` output: one line per event, and last `result: win|loss|draw` or
//! `result: error <reason>`.

use bingo::{Ending, GameEvent, Side, Verification};
use bingo_net::Update;
use tokio::sync::mpsc;

/// Prints every update until the sender is gone. Text from the other side
/// arrives with its control characters replaced (by the session), so no
/// line printed here can be forged by a peer.
pub async fn print(mut updates: mpsc::Receiver<Update>) {
    while let Some(update) = updates.recv().await {
        for line in describe(&update) {
            println!("{line}");
        }
    }
}

fn who(side: Side) -> &'static str {
    match side {
        Side::Me => "me",
        Side::Peer => "peer",
    }
}

/// The printed lines for one update.
fn describe(update: &Update) -> Vec<String> {
    let game = match update {
        Update::Listening(addr) => return vec![format!("listening on {addr}")],
        Update::NewGame(number) => return vec![format!("game {number}")],
        Update::Connected(Some(addr)) => return vec![format!("connected: {addr}")],
        Update::Connected(None) => return vec!["connected".into()],
        Update::ChatDropped(count) => {
            return vec![format!("chat: {count} lines dropped (too many too fast)")];
        }
        Update::Failed(error) => return vec![format!("failed: {error}")],
        Update::Game(event) => event,
    };
    match game {
        // Reported by the driver as `Connected`, with the address.
        GameEvent::Joined(_) => Vec::new(),
        GameEvent::Started {
            settings,
            extensions,
            card,
        } => {
            let extensions = extensions.names().join(" ");
            let rows: Vec<String> = card.to_string().lines().map(str::to_owned).collect();
            vec![
                format!("settings: {settings} extensions: {extensions}"),
                format!("card: {}", rows.join(" / ")),
            ]
        }
        GameEvent::Turn(side) => vec![format!("turn: {}", who(*side))],
        GameEvent::Called {
            by,
            number,
            flag,
            new_lines,
            completed,
        } => {
            let mut line = format!(
                "{}: {} {number} (my lines: {completed})",
                who(*by),
                flag.keyword()
            );
            for done in new_lines {
                line.push_str(&format!(" +{done}"));
            }
            vec![line]
        }
        GameEvent::Chat { from, text } => vec![format!("chat {}: {text}", who(*from))],
        GameEvent::Rejected(reason) => vec![format!("rejected: {reason}")],
        GameEvent::Decided(outcome) => vec![format!("decided: {outcome}")],
        GameEvent::Suspended => vec!["connection lost: waiting to resume".into()],
        GameEvent::Reconnecting => vec!["reconnecting".into()],
        GameEvent::Resumed => vec!["resumed".into()],
        GameEvent::Ended(ending) => result_lines(ending),
    }
}

/// The last lines of a game: the check of the other side, then the result.
pub fn result_lines(ending: &Ending) -> Vec<String> {
    match ending {
        Ending::Result {
            verification: Verification::Cheated(cheat),
            ..
        } => vec![
            format!("verify: CHEATING: the other side {cheat}"),
            format!("result: error the other side cheated: {cheat}"),
        ],
        Ending::Result {
            outcome,
            verification,
        } => vec![
            format!("verify: {verification}"),
            format!("result: {}", outcome.result),
        ],
        Ending::Violation(_) | Ending::PeerError(_) | Ending::Disconnected(_) | Ending::Left => {
            vec![format!("result: error {ending}")]
        }
    }
}
