// Entering a room, for the Omok and the bingo room pages alike.
//
// A room paces the joins that go to all its members (docs/web-protocol.md,
// "Limits per room"): when many arrive at once it answers `busy`, and the
// page comes in a second later. The join counts as answered once the room's
// state arrives; until then each `busy` sends it again.

// Returns `join()`, which asks `id` for a seat (or to watch, `watchOnly`)
// and tries again while the room is busy, saying so with `toast` (the
// server's words ask to try again, which the page does itself).
export function roomJoin(conn, id, watchOnly, toast) {
  let pending = false, timer = null;
  const join = () => {
    clearTimeout(timer);
    pending = true;
    conn.send({ type: "join", room: id, play: !watchOnly });
  };
  conn.on((msg) => {
    if (msg.type === "state" && msg.room === id) pending = false;
    else if (msg.type === "error" && msg.code === "busy" && pending) {
      toast("Many are coming in at once: entering in a moment…");
      clearTimeout(timer);
      timer = setTimeout(join, 1000);
    }
  });
  return join;
}
