//! `omok_net::client::Connection` over real loopback TCP against a scripted
//! referee written here, which plays the referee's part of `omok-wire.md`
//! and sends its frames split byte by byte or several in one write.

use futures::FutureExt;
use omok::frame::EndResult;
use omok::player::{EndReport as EndReason, MoveError, Notice, Phase, ProtocolError};
use omok_net::client::{ClientError, Connection};
use renju::{Color, IllegalMove, Point, Rule};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

fn pt(s: &str) -> Point {
    s.parse().unwrap()
}

/// The referee's end of one connection.
struct Script {
    stream: TcpStream,
}

impl Script {
    async fn expect(&mut self, frame: [u8; 3]) {
        let mut buf = [0; 3];
        self.stream.read_exact(&mut buf).await.unwrap();
        assert_eq!(buf, frame, "referee expected {frame:?}");
    }

    /// Sends frames one byte per write.
    async fn send_split(&mut self, frames: &[[u8; 3]]) {
        for b in frames.concat() {
            self.stream.write_all(&[b]).await.unwrap();
            self.stream.flush().await.unwrap();
        }
    }

    /// Sends frames all in one write.
    async fn send_coalesced(&mut self, frames: &[[u8; 3]]) {
        self.stream.write_all(&frames.concat()).await.unwrap();
    }

    /// Sends End, half-closes, and waits for the player to close as the
    /// spec's referee does.
    async fn end(mut self, frame: [u8; 3]) {
        self.send_split(&[frame]).await;
        self.stream.shutdown().await.unwrap();
        let mut rest = Vec::new();
        self.stream.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty(), "player sent {rest:?} after End");
    }
}

/// A listener on a free loopback port and a task running `script` on the
/// first connection.
async fn referee<F, Fut>(script: F) -> (String, JoinHandle<()>)
where
    F: FnOnce(Script) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let task = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        stream.set_nodelay(true).unwrap();
        script(Script { stream }).await;
    });
    (addr, task)
}

/// Plays `ours` in order whenever it is our turn and returns every notice.
async fn play_through(conn: &mut Connection, ours: &[&str]) -> Result<Vec<Notice>, ClientError> {
    let mut ours = ours.iter();
    let mut seen = Vec::new();
    while let Some(notice) = conn.next_notice().await? {
        if let Notice::OurTurn(_) = notice {
            conn.play(pt(ours.next().expect("script asks too many moves")))
                .await?;
        }
        seen.push(notice);
    }
    Ok(seen)
}

#[tokio::test]
async fn black_plays_a_game_to_five() {
    let (addr, task) = referee(|mut r| async move {
        r.expect([0, 0, 0]).await;
        r.send_split(&[[0, 0, 1]]).await;
        r.expect([1, 0, 1]).await;
        r.send_split(&[[2, 0, 0]]).await;
        let white = ["a15", "b15", "c15", "d15"];
        for (b, w) in ["h8", "i8", "j8", "k8"].iter().zip(white) {
            let b = pt(b).to_byte();
            r.expect([3, 0, b]).await;
            // The acknowledgement and white's reply in one segment.
            r.send_coalesced(&[[2, 1, b], [2, 0, pt(w).to_byte()]])
                .await;
        }
        r.expect([3, 0, pt("l8").to_byte()]).await;
        r.end([4, 1, pt("l8").to_byte()]).await;
    })
    .await;
    let mut conn = Connection::connect(addr.as_str(), Rule::Renju)
        .await
        .unwrap();
    let notices = play_through(&mut conn, &["h8", "i8", "j8", "k8", "l8"])
        .await
        .unwrap();
    assert!(matches!(notices[0], Notice::Seated(Color::Black)));
    let Some(Notice::GameOver(outcome)) = notices.last() else {
        panic!("{notices:?}")
    };
    assert_eq!(outcome.result, EndResult::Won);
    assert_eq!(outcome.reason, EndReason::Five(pt("l8")));
    assert_eq!(outcome.game.moves().len(), 9);
    assert_eq!(conn.session().phase(), Phase::Over);
    assert!(conn.next_notice().await.unwrap().is_none());
    drop(conn);
    task.await.unwrap();
}

#[tokio::test]
async fn white_loses_on_time_and_illegal_points_are_kept_local() {
    let (addr, task) = referee(|mut r| async move {
        r.expect([0, 0, 0]).await;
        // Connect reply, start and black's first stone all at once.
        r.send_coalesced(&[[0, 1, 1]]).await;
        r.expect([1, 0, 1]).await;
        r.send_coalesced(&[[2, 1, 0], [2, 0, pt("h8").to_byte()]])
            .await;
        r.end([4, 0, 1]).await;
    })
    .await;
    let mut conn = Connection::connect(addr.as_str(), Rule::Renju)
        .await
        .unwrap();
    let mut last = None;
    while let Some(notice) = conn.next_notice().await.unwrap() {
        if let Notice::OurTurn(game) = &notice {
            assert_eq!(game.last_move(), Some(pt("h8")));
            // An occupied point is refused without a frame being sent;
            // then we "think too long" by sending nothing at all.
            let err = conn.play(pt("h8")).await.unwrap_err();
            assert!(matches!(
                err,
                ClientError::Move(MoveError::Illegal(IllegalMove::Occupied(_)))
            ));
        }
        last = Some(notice);
    }
    let Some(Notice::GameOver(outcome)) = last else {
        panic!()
    };
    assert_eq!(outcome.color, Color::White);
    assert_eq!(outcome.reason, EndReason::Timeout);
    assert_eq!(outcome.to_string(), "white, lost on time (1 move)");
    drop(conn);
    task.await.unwrap();
}

#[tokio::test]
async fn refused_seat_ends_quietly() {
    let (addr, task) = referee(|mut r| async move {
        r.expect([0, 0, 0]).await;
        r.end([0, 2, 2]).await;
    })
    .await;
    let mut conn = Connection::connect(addr.as_str(), Rule::Renju)
        .await
        .unwrap();
    let notices = play_through(&mut conn, &[]).await.unwrap();
    assert!(matches!(notices[..], [Notice::Refused { seated: 2 }]));
    drop(conn);
    task.await.unwrap();
}

#[tokio::test]
async fn garbage_from_the_referee_is_a_protocol_error() {
    let (addr, task) = referee(|mut r| async move {
        r.expect([0, 0, 0]).await;
        r.send_split(&[[0, 0, 1]]).await;
        r.expect([1, 0, 1]).await;
        r.send_split(&[[9, 9, 9]]).await;
        let mut rest = Vec::new();
        r.stream.read_to_end(&mut rest).await.unwrap();
    })
    .await;
    let mut conn = Connection::connect(addr.as_str(), Rule::Renju)
        .await
        .unwrap();
    let err = play_through(&mut conn, &[]).await.unwrap_err();
    assert!(
        matches!(err, ClientError::Protocol(ProtocolError::Frame(_))),
        "{err}"
    );
    drop(conn);
    task.await.unwrap();
}

#[tokio::test]
async fn referee_vanishing_mid_game_is_an_error() {
    let (addr, task) = referee(|mut r| async move {
        r.expect([0, 0, 0]).await;
        r.send_split(&[[0, 0, 1]]).await;
        r.expect([1, 0, 1]).await;
        r.send_split(&[[2, 0, 0]]).await;
        r.expect([3, 0, pt("h8").to_byte()]).await;
        // A frame cut short, then the connection closes.
        r.send_split(&[[2, 1, pt("h8").to_byte()]]).await;
        r.stream.write_all(&[2, 0]).await.unwrap();
    })
    .await;
    let mut conn = Connection::connect(addr.as_str(), Rule::Renju)
        .await
        .unwrap();
    let err = play_through(&mut conn, &["h8"]).await.unwrap_err();
    // The codec reports the cut frame at the end of the stream.
    assert!(matches!(err, ClientError::Io(_)), "{err}");
    task.await.unwrap();

    let (addr, task) = referee(|mut r| async move {
        r.expect([0, 0, 0]).await;
        r.send_split(&[[0, 1, 1]]).await;
        r.expect([1, 0, 1]).await;
    })
    .await;
    let mut conn = Connection::connect(addr.as_str(), Rule::Renju)
        .await
        .unwrap();
    let err = play_through(&mut conn, &[]).await.unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::Protocol(ProtocolError::Closed(Phase::Seated))
        ),
        "{err}"
    );
    task.await.unwrap();
}

/// `next_notice` abandoned at every await point (as `select!` does when a
/// key press wins the race) loses no byte: the next call carries on.
#[tokio::test]
async fn next_notice_is_cancel_safe() {
    let (addr, task) = referee(|mut r| async move {
        r.expect([0, 0, 0]).await;
        r.send_split(&[[0, 1, 1]]).await;
        r.expect([1, 0, 1]).await;
        r.send_split(&[[2, 1, 0], [2, 0, pt("h8").to_byte()]]).await;
        r.expect([3, 0, pt("h9").to_byte()]).await;
        r.end([4, 1, 0]).await;
    })
    .await;
    let mut conn = Connection::connect(addr.as_str(), Rule::Renju)
        .await
        .unwrap();
    let mut notices = Vec::new();
    let mut cancelled = 0;
    loop {
        // Poll once; if it is not ready, drop the future mid-flight.
        match conn.next_notice().now_or_never() {
            None => {
                cancelled += 1;
                tokio::task::yield_now().await;
            }
            Some(Ok(Some(notice))) => {
                if let Notice::OurTurn(_) = notice {
                    conn.play(pt("h9")).await.unwrap();
                }
                notices.push(notice);
            }
            Some(Ok(None)) => break,
            Some(Err(e)) => panic!("{e}"),
        }
    }
    assert!(cancelled > 0);
    assert!(
        matches!(
            &notices[..],
            [
                Notice::Seated(Color::White),
                Notice::TheirTurn(_),
                Notice::OurTurn(_),
                Notice::GameOver(_),
            ]
        ),
        "{notices:?}"
    );
    drop(conn);
    task.await.unwrap();
}
