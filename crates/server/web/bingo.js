// Bingo rooms in the browser: the lobby's form and rows, the room page and
// the replay. Speaks only the "Bingo rooms" part of docs/web-protocol.md;
// every text from others is set as text (textContent), never markup.
//
// The page's shared pieces (element builder, connection, toast) come in
// `ctx` from app.js, so this module holds nothing but bingo (and the join
// that both room pages share, from join.js).

import { roomJoin } from "/assets/join.js";

// ---- lobby -------------------------------------------------------------------------

export function bingoCreatePanel(ctx) {
  const { h, conn } = ctx;
  const range = (a, b) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
  const players = h("select", { id: "bingo-players-count", "aria-label": "players" }, ...range(2, 8).map((n) => h("option", { value: n, selected: n === 3 }, `${n} players`)));
  const size = h("select", { id: "bingo-size", "aria-label": "card size" }, ...range(3, 15).map((n) => h("option", { value: n, selected: n === 5 }, `${n}×${n}`)));
  const lines = h("select", { id: "bingo-lines", "aria-label": "lines to win" });
  const syncLines = () => {
    const max = 2 * Number(size.value) + 2;
    const keep = Math.min(Number(lines.value) || 5, max);
    lines.replaceChildren(...range(1, max).map((n) => h("option", { value: n, selected: n === keep }, `${n} line${n > 1 ? "s" : ""} to win`)));
  };
  size.addEventListener("change", syncLines); syncLines();
  const first = h("select", { id: "bingo-first", "aria-label": "first caller" }, h("option", { value: "" }, "first caller by chance"),
    h("option", { value: "0" }, "I call first"));
  const limit = h("select", { id: "bingo-limit", "aria-label": "time per call" }, h("option", { value: "" }, "no time limit"),
    h("option", { value: "15000" }, "15 s per call"), h("option", { value: "30000" }, "30 s per call"));
  const priv = h("input", { type: "checkbox", id: "bingo-private" });
  const create = () => {
    const msg = { type: "create", game: "bingo", players: Number(players.value), size: Number(size.value), lines: Number(lines.value), private: priv.checked };
    if (first.value !== "") msg.first = Number(first.value);
    if (limit.value !== "") msg.call_ms = Number(limit.value);
    conn.send(msg);
  };
  return h("div", { class: "panel" }, h("h2", {}, "New bingo game"),
    h("div", { class: "row" }, players, size, lines),
    h("div", { class: "row" }, first, limit),
    h("div", { class: "row" }, h("label", {}, priv, " private (only by link)")),
    h("div", { class: "row" }, h("button", { id: "bingo-create", class: "primary", onclick: create }, "Create bingo room")));
}

export function bingoRow(ctx, r) {
  const { h } = ctx;
  const names = r.seats.map((s) => s ?? "(free)").join(", ");
  const free = r.seats.some((s) => s == null);
  const state = r.status === "waiting" ? "waiting for players" : r.status === "over" ? "finished" : r.status;
  return h("tr", { "data-room": r.id, "data-game": "bingo" },
    h("td", {}, names),
    h("td", {}, `bingo ${r.size}×${r.size}, ${r.lines} line${r.lines > 1 ? "s" : ""}`),
    h("td", {}, state, r.spectators ? ` · ${r.spectators} watching` : ""),
    h("td", {}, free ? h("a", { href: `/b/${r.id}`, class: "join" }, "join") : null, " ",
      h("a", { href: `/b/${r.id}?watch=1` }, "watch")));
}

// ---- cards -------------------------------------------------------------------------

// The lines of an n×n card as lists of cell indexes: rows, columns, diagonals.
function cardLines(n) {
  const lines = [];
  for (let i = 0; i < n; i++) {
    lines.push(Array.from({ length: n }, (_, j) => i * n + j));
    lines.push(Array.from({ length: n }, (_, j) => j * n + i));
  }
  lines.push(Array.from({ length: n }, (_, j) => j * n + j));
  lines.push(Array.from({ length: n }, (_, j) => j * n + (n - 1 - j)));
  return lines;
}

function completedLines(numbers, called) {
  const n = Math.round(Math.sqrt(numbers.length));
  return cardLines(n).filter((line) => line.every((i) => called.has(numbers[i])));
}

// A card as a grid; `cell(i, number)` gives each cell's attributes.
function grid(h, n, numbers, cell, attrs = {}) {
  const g = h("div", { class: "bingo-grid", ...attrs });
  // Through the CSSOM: the page's CSP allows no inline style attributes.
  g.style.setProperty("--n", n);
  for (let i = 0; i < n * n; i++) {
    const number = numbers[i];
    const a = cell(i, number);
    g.append(h(a.tag || "button", { type: "button", "data-cell": i, "data-number": number || null, ...a.attrs }, number ? String(number) : ""));
  }
  return g;
}

function shuffled(n) {
  const a = Array.from({ length: n * n }, (_, i) => i + 1);
  const r = new Uint32Array(a.length);
  crypto.getRandomValues(r);
  for (let i = a.length - 1; i > 0; i--) { const j = r[i] % (i + 1); [a[i], a[j]] = [a[j], a[i]]; }
  return a;
}

// How a recorded game ended, in words.
const REASONS = { bingo: "decided by the calls", forfeit: "decided by players leaving", shutdown: "stopped by the server" };

function rankText(place) {
  if (place.standing === "bingo") return `bingo on call ${place.call}`;
  if (place.standing === "forfeited") return "left the game";
  return "no bingo";
}

// The final ranking as a table, best first.
function rankingTable(h, names, places) {
  const order = places.map((p, seat) => ({ ...p, seat })).sort((a, b) => a.rank - b.rank || a.seat - b.seat);
  return h("table", { class: "list", id: "bingo-ranking" },
    h("thead", {}, h("tr", {}, h("th", {}, "Place"), h("th", {}, "Player"), h("th", {}, ""))),
    h("tbody", {}, ...order.map((p) => h("tr", { "data-rank": p.rank, "data-seat": p.seat },
      h("td", {}, String(p.rank)), h("td", { class: "player-name" }, names[p.seat]), h("td", {}, rankText(p))))));
}

// Every card at the end, marked with the calls up to `upto`.
function allCards(h, names, cards, calls, places) {
  const called = new Set(calls.map((c) => c.number));
  const all = h("div", { class: "bingo-all", id: "bingo-cards" });
  // The cards' width follows their side, so that big cards stay legible.
  const side = cards.find((c) => c);
  all.style.setProperty("--n", side ? Math.round(Math.sqrt(side.length)) : 5);
  all.append(...cards.map((card, seat) => {
    const title = h("div", { class: "bingo-card-title" }, h("span", { class: "player-name" }, names[seat]),
      places ? ` · place ${places[seat].rank}` : "");
    if (!card) return h("div", { class: "bingo-small", "data-seat": seat }, title, h("p", { class: "muted" }, "no card"));
    const n = Math.round(Math.sqrt(card.length));
    const done = new Set(completedLines(card, called).flat());
    const g = grid(h, n, card, (i, num) => ({ tag: "span", attrs: { class: `${called.has(num) ? "marked" : ""} ${done.has(i) ? "in-line" : ""}` } }));
    return h("div", { class: "bingo-small", "data-seat": seat }, title, g);
  }));
  return all;
}

// ---- a room ------------------------------------------------------------------------

export function bingoRoomPage(ctx, id) {
  const { h, conn, toast, showProblem, main, copyText } = ctx;
  const watchOnly = new URLSearchParams(location.search).has("watch");
  const join = roomJoin(conn, id, watchOnly, toast);
  let mySeat = null, state = null, received = 0, draft = null;
  const status = h("div", { class: "status", id: "status" });
  // While seats are free the link to send is offered beside the status (the
  // links panel is far below on a phone).
  const invite = h("div", { class: "row" });
  const players = h("ul", { class: "bingo-players", id: "bingo-players" });
  const cardBox = h("div", { id: "bingo-card-box" });
  const tools = h("div", { class: "row", id: "bingo-tools" });
  const calls = h("ol", { class: "moves calls", id: "bingo-calls" });
  const end = h("div", { id: "bingo-end" });
  const chatLog = h("div", { class: "chat-log", id: "chat-log", "aria-live": "polite" });
  const chatInput = h("input", { id: "chat-input", maxlength: 300, placeholder: "say something", "aria-label": "chat message" });
  const sendChat = () => { const t = chatInput.value.trim(); if (t) conn.send({ type: "chat", text: t }); chatInput.value = ""; };
  chatInput.addEventListener("keydown", (e) => { if (e.key === "Enter") sendChat(); });
  const spectators = h("span", { id: "spectators" });
  const link = `${location.origin}/b/${id}`;
  main.replaceChildren(h("div", { class: "room-layout bingo-room" },
    h("div", {}, h("div", { class: "panel" }, status, invite, cardBox, tools), end),
    h("div", {},
      h("div", { class: "panel" }, h("h2", {}, "Players"), players),
      h("div", { class: "panel" }, h("h2", {}, "Calls"), calls),
      h("div", { class: "panel" }, h("h2", {}, "Chat ", spectators), chatLog,
        h("div", { class: "chat-form" }, chatInput, h("button", { id: "chat-send", onclick: sendChat }, "Send"))),
      h("div", { class: "panel" }, h("div", {}, "Invite by link: ", h("span", { class: "link", id: "play-link" }, link)),
        h("div", {}, "Watch link: ", h("span", { class: "link", id: "watch-link" }, `${link}?watch=1`))))));

  const name = (seat) => (state.seats[seat] ? state.seats[seat].name : "(free seat)");
  const filling = () => state.status === "waiting" || state.status === "filling";

  // Before the calls a seat edits a draft: click an empty cell to place the
  // next number, a filled one to take it back; Ready sends it.
  function editor() {
    const n = state.size;
    if (!draft) draft = state.card ? [...state.card] : Array(n * n).fill(0);
    const placeNext = (i) => {
      if (draft[i]) { draft[i] = 0; } else {
        const used = new Set(draft);
        let k = 1; while (used.has(k)) k++;
        draft[i] = k;
      }
      render();
    };
    const complete = draft.every((x) => x > 0);
    const sent = state.card && state.card.every((x, i) => x === draft[i]);
    cardBox.replaceChildren(grid(h, n, draft, (i) => ({ attrs: { onclick: () => placeNext(i), class: "draft" } }), { id: "bingo-card", class: "bingo-grid editing" }));
    tools.replaceChildren(
      h("button", { id: "bingo-shuffle", onclick: () => { draft = shuffled(n); render(); } }, "Shuffle"),
      h("button", { id: "bingo-clear", onclick: () => { draft = Array(n * n).fill(0); render(); } }, "Clear"),
      h("button", { id: "bingo-ready", class: "primary", disabled: !complete || sent, onclick: () => conn.send({ type: "card", numbers: draft }) }, sent ? "Ready ✓" : "Ready"),
      h("span", { class: "muted" }, complete ? "" : `place ${draft.filter((x) => !x).length} more (click the cells in order), or shuffle`));
  }

  function myCard() {
    const n = state.size;
    const called = new Set(state.calls.map((c) => c.number));
    const done = new Set(completedLines(state.card, called).flat());
    const myTurn = state.status === "playing" && state.turn === mySeat;
    const last = state.calls.length ? state.calls[state.calls.length - 1].number : null;
    cardBox.replaceChildren(grid(h, n, state.card, (i, num) => ({
      attrs: {
        class: `${called.has(num) ? "marked" : ""} ${done.has(i) ? "in-line" : ""} ${num === last ? "last" : ""}`,
        "aria-pressed": called.has(num) ? "true" : "false",
        disabled: !myTurn || called.has(num),
        onclick: () => conn.send({ type: "call", number: num }),
      },
    }), { id: "bingo-card", class: `bingo-grid ${myTurn ? "my-turn" : ""}` }));
    const lines = completedLines(state.card, called).length;
    tools.replaceChildren(h("span", { id: "bingo-lines-done" }, `lines: ${lines} of ${state.lines}`));
    if (state.status === "playing" && !state.seats[mySeat].gone) {
      tools.append(h("button", { id: "bingo-quit", onclick: () => { if (confirm("Leave this game for good?")) conn.send({ type: "quit" }); } }, "Quit game"));
    }
  }

  // Who has no card here (a watcher) sees the numbers 1..n² with the
  // calls marked, so the game can be followed before the cards are shown.
  function calledBoard() {
    const n = state.size;
    const called = new Set(state.calls.map((c) => c.number));
    const last = state.calls.length ? state.calls[state.calls.length - 1].number : null;
    const numbers = Array.from({ length: n * n }, (_, i) => i + 1);
    const board = grid(h, n, numbers, (i, num) => ({ tag: "span", attrs: { class: `${called.has(num) ? "marked" : ""} ${num === last ? "last" : ""}` } }), { id: "bingo-called" });
    return h("div", {}, h("p", { class: "muted" }, "You are watching: the numbers called so far are marked; every card is shown at the end."), board);
  }

  function render() {
    if (!state) return;
    players.replaceChildren(...state.seats.map((s, seat) => h("li", { "data-seat": seat, class: state.turn === seat ? "to-move" : "" },
      h("span", { class: "player-name" }, s ? s.name : "(free seat)"),
      seat === mySeat ? h("b", {}, " (you)") : null,
      s && !s.connected && !s.gone ? h("span", { class: "muted" }, " · away") : null,
      s && s.gone ? h("span", { class: "muted" }, " · left") : null,
      s && filling() ? h("span", { class: "muted" }, s.ready ? " · ready" : " · filling") : null,
      s && s.bingo_on_call ? h("span", { class: "bingo-badge" }, ` BINGO (call ${s.bingo_on_call})`) : null,
      seat === state.first && !state.calls.length ? h("span", { class: "muted" }, " · calls first") : null)));
    spectators.textContent = `· ${state.spectators} watching`;
    calls.replaceChildren(...state.calls.map((c) => h("li", { "data-call": c.number }, h("b", {}, String(c.number)), " ", h("span", { class: "muted" }, name(c.seat)))));
    calls.scrollTop = calls.scrollHeight;
    if (mySeat != null && filling()) editor();
    else if (mySeat != null && state.card) myCard();
    else { cardBox.replaceChildren(calledBoard()); tools.replaceChildren(); }
    if (!filling()) draft = null;
    end.replaceChildren();
    if (state.result) {
      const names = state.seats.map((s) => (s ? s.name : ""));
      end.append(h("div", { class: "panel" }, h("h2", {}, "Result"), rankingTable(h, names, state.result.places),
        state.record ? h("p", {}, h("a", { id: "bingo-replay", href: `/games/${encodeURIComponent(state.record)}` }, "Replay"), " · ",
          h("a", { href: `/games/${encodeURIComponent(state.record)}.json` }, "JSON")) : null),
        h("div", { class: "panel" }, h("h2", {}, "All cards"), allCards(h, names, state.result.cards, state.calls, state.result.places)));
    }
    status.textContent = statusLine();
    invite.replaceChildren(...(state.status === "waiting" && mySeat != null
      ? [h("button", { id: "copy-invite", class: "primary", onclick: () => copyText(link) }, "Copy the link to send")] : []));
  }

  function statusLine() {
    const taken = state.seats.filter((s) => s).length;
    // Someone who opened the link once every seat was taken watches: say so.
    const watching = mySeat == null && !watchOnly && taken === state.players ? " You are watching: every seat is taken." : "";
    return statusText(taken) + watching;
  }

  function statusText(taken) {
    const s = state;
    if (s.status === "waiting") return `Waiting for players: ${taken} of ${s.players} seated. Send them the link.`;
    if (s.status === "filling") return mySeat != null && !s.seats[mySeat].ready ? "Fill your card, then press Ready." : "Waiting for the others' cards.";
    if (s.status === "over") {
      const p = s.result.places;
      if (s.result.reason === "shutdown") return `The server stopped this game after ${s.calls.length} call${s.calls.length === 1 ? "" : "s"}; places as they stood.`;
      const winners = p.map((x, seat) => (x.rank === 1 ? seat : null)).filter((x) => x != null);
      if (winners.length === p.length) return "Game over: a draw.";
      const who = winners.map(name).join(" and ");
      const you = mySeat != null ? ` You placed ${p[mySeat].rank} of ${p.length}.` : "";
      return `Game over: ${who} ${winners.length > 1 ? "share first place" : "wins"}.${you}`;
    }
    const left = s.turn_ms != null ? ` · ${Math.max(0, Math.ceil((s.turn_ms - (performance.now() - received)) / 1000))} s` : "";
    if (s.turn === mySeat) return `Your call: click a number on your card${left}`;
    return `${name(s.turn)} calls${left} · call ${s.calls.length + 1}`;
  }

  conn.on((msg) => {
    if (msg.type === "state" && msg.room === id) { state = msg; received = performance.now(); render(); }
    else if (msg.type === "you" && msg.room === id) { mySeat = msg.seat; draft = null; render(); }
    else if (msg.type === "chat") {
      chatLog.append(h("div", { class: "chat-line" }, h("span", { class: "from" }, msg.from), ": ", h("span", { class: "text" }, msg.text)));
      chatLog.scrollTop = chatLog.scrollHeight;
    } else if (msg.type === "error" && msg.code === "no_such_room") {
      showProblem("This room does not exist (any more). Rooms close when everyone has left.");
    }
  });
  setInterval(() => { if (state && state.turn_ms != null && state.status === "playing") status.textContent = statusLine(); }, 500);
  return join;
}

// ---- replay ------------------------------------------------------------------------

export function bingoReplay(ctx, id, g) {
  const { h, main } = ctx;
  const names = g.players.map((p) => p.name);
  const cards = g.players.map((p) => p.card);
  // Records saved before standings were kept have none: a bingo shows by its call, anything else as no bingo.
  const places = g.players.map((p) => ({ rank: p.rank, standing: p.standing || (p.bingo_on_call ? "bingo" : "unfinished"), call: p.bingo_on_call }));
  let at = g.calls.length;
  const info = h("div", { class: "status", id: "replay-at" });
  const box = h("div", {});
  const show = () => {
    const shown = g.calls.slice(0, at);
    box.replaceChildren(allCards(h, names, cards, shown, at === g.calls.length ? places : null));
    const c = g.calls[at - 1];
    info.textContent = `call ${at} of ${g.calls.length}${c ? `: ${c.number} by ${names[c.seat]}` : ""}`;
  };
  const go = (n) => { at = Math.max(0, Math.min(g.calls.length, n)); show(); };
  document.addEventListener("keydown", (e) => {
    if (e.key === "ArrowLeft") go(at - 1); else if (e.key === "ArrowRight") go(at + 1);
    else if (e.key === "Home") go(0); else if (e.key === "End") go(g.calls.length);
  });
  const base = `/games/${encodeURIComponent(id)}`;
  const ctl = (bid, label, title, onclick) => h("button", { id: bid, title, "aria-label": title, onclick }, label);
  main.replaceChildren(h("div", { class: "room-layout bingo-room bingo-replay" }, h("div", { class: "panel" }, box),
    h("div", { class: "panel" }, h("h2", {}, `Bingo ${g.size}×${g.size}, ${g.lines} line${g.lines > 1 ? "s" : ""}`),
      h("p", {}, `${REASONS[g.reason] || g.reason} · ${new Date(g.started_unix_ms).toLocaleString()}`),
      rankingTable(h, names, places), info,
      // The glyphs of the Omok replay: ⏮ and ⏭ are missing from common fonts (a box on a phone).
      h("div", { class: "replay-controls" },
        ctl("first", "|◀", "first call", () => go(0)), ctl("prev", "◀", "previous call (←)", () => go(at - 1)),
        ctl("next", "▶", "next call (→)", () => go(at + 1)), ctl("last", "▶|", "last call", () => go(g.calls.length))),
      h("p", { class: "muted small" }, "Keys: ← → step, Home / End jump."),
      h("p", {}, "Download: ", h("a", { href: `${base}.json` }, "JSON")))));
  show();
}
