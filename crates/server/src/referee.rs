//! The 3-byte referee port of `omok-wire.md`, inside the server: a
//! program's Connect seats it in the oldest room waiting for a program, or
//! in a new room of its own that the lobby shows as waiting. The room's
//! table referees exactly as `madang omok serve` does; this layer only
//! moves frames.

use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use omok::clock::TimeControl;
use omok::frame::PlayerMsg;
use omok::room::{Input, RoomConfig};
use omok_net::codec::FrameCodec;
use renju::Color;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_util::codec::Framed;
use tracing::Instrument;

use crate::Shared;
use crate::rooms::{CLIENT_QUEUE, Outgoing, RoomCmd};

/// How long a connection may stay silent before its Connect.
const CONNECT_WITHIN: Duration = Duration::from_secs(10);
/// How long a closing connection is kept for the player to read its End.
const LINGER: Duration = Duration::from_secs(2);

/// Accepts programs until the listener fails or the task is dropped.
pub async fn accept(shared: Arc<Shared>, listener: TcpListener) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!("referee port: accept failed: {e}");
                // Out of descriptors, most likely: let some close first.
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Some(slot) = shared.connection_slot() else {
            continue;
        };
        let id = shared.next_client_id();
        let shared = Arc::clone(&shared);
        let span = tracing::info_span!("program", id);
        tokio::spawn(
            async move {
                serve(shared, stream, id).await;
                drop(slot);
            }
            .instrument(span),
        );
    }
}

async fn serve(shared: Arc<Shared>, stream: TcpStream, id: u64) {
    let _ = stream.set_nodelay(true);
    let mut framed = Framed::new(stream, FrameCodec);
    // Only a Connect seats a program; anything else closes it unanswered.
    let first = tokio::time::timeout(CONNECT_WITHIN, framed.next()).await;
    let Ok(Some(Ok(frame))) = first else { return };
    if !matches!(PlayerMsg::decode(frame), Ok(PlayerMsg::Connect)) {
        return;
    }
    let room = match shared.rooms.take_program_seat() {
        Some(room) => room,
        None => {
            let config = RoomConfig {
                rule: shared.config.referee_rule,
                time_control: TimeControl::PerMove {
                    ms: shared.config.referee_turn_time.as_millis() as u64,
                },
                grace: shared.config.grace,
                idle_timeout: shared.config.referee_idle,
                open_to_programs: true,
                first_seat: Color::Black,
            };
            match shared.rooms.open(config, false, true, None) {
                Ok((_, tx)) => tx,
                Err(_) => {
                    // Refused as a third player would be.
                    let _ = framed.send([0, 2, 2]).await;
                    return;
                }
            }
        }
    };
    let (sink, mut queue) = mpsc::channel(CLIENT_QUEUE);
    let enter = RoomCmd::Enter {
        from: id,
        sink: sink.into(),
        input: Input::Frame(frame),
    };
    if room.send(enter).await.is_err() {
        return;
    }
    // A program that closed its sending side (or all of it) has left; one
    // that half-closed still reads what its leaving brings (its End).
    let mut reading = true;
    loop {
        tokio::select! {
            read = framed.next(), if reading => {
                let input = match read {
                    Some(Ok(frame)) => Input::Frame(frame),
                    _ => Input::Leave,
                };
                reading = input != Input::Leave;
                if room.send(RoomCmd::Input { from: id, input }).await.is_err() {
                    return;
                }
            }
            out = queue.recv() => match out {
                Some(Outgoing::Frame(frame)) => {
                    if framed.send(frame).await.is_err() {
                        let _ = room.send(RoomCmd::Input { from: id, input: Input::Leave }).await;
                        return;
                    }
                }
                Some(Outgoing::Close) | None => break,
                Some(Outgoing::Text(_)) => {}
            }
        }
    }
    // Shut down our side at once, then wait for the player to close (or
    // the linger), so that End is never lost to a reset.
    let mut stream = framed.into_inner();
    let _ = tokio::io::AsyncWriteExt::shutdown(&mut stream).await;
    let mut sink = [0u8; 64];
    let _ = tokio::time::timeout(LINGER, async {
        loop {
            match tokio::io::AsyncReadExt::read(&mut stream, &mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await;
}
