// madang in the browser: lobby, Omok rooms, replays. The page speaks only
// the documented WebSocket protocol (docs/web-protocol.md) and draws what
// the server sends; every text from others is set as text, never markup.

import { createBoard, drawBoard, lineThrough } from "/assets/board.js";
import { bingoCreatePanel, bingoReplay, bingoRoomPage, bingoRow } from "/assets/bingo.js";
import { roomJoin } from "/assets/join.js";

const main = document.getElementById("main");
const PROTOCOL_VERSION = 2; // 2: moves arrive as `moved` (docs/web-protocol.md)

function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v === true) e.setAttribute(k, "");
    else if (v !== false && v != null) e.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c != null) e.append(c instanceof Node ? c : String(c));
  return e;
}

function toast(text) {
  const t = document.getElementById("toast");
  t.textContent = text;
  t.classList.add("show");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => t.classList.remove("show"), 3000);
}

// A toast that asked for something done goes at once, rather than ask on
// (`text`: only if it still says that).
function hideToast(text) {
  const t = document.getElementById("toast");
  if (text !== undefined && t.textContent !== text) return;
  clearTimeout(toast.timer);
  t.classList.remove("show");
}

// ---- name, asked once ------------------------------------------------------

function savedName() { return localStorage.getItem("madang.name"); }

function askName(then) {
  const input = h("input", { id: "name-input", maxlength: 24, placeholder: "your name", autocomplete: "nickname", value: savedName() || "" });
  const save = () => {
    const name = input.value.trim();
    if (!name) { input.focus(); return; }
    localStorage.setItem("madang.name", name);
    then();
  };
  input.addEventListener("keydown", (e) => { if (e.key === "Enter") save(); });
  main.replaceChildren(h("div", { class: "panel" },
    h("h2", {}, "Welcome to the yard"),
    h("p", {}, "What name should others see? It is remembered on this device; no account needed."),
    h("div", { class: "row" }, input, h("button", { id: "name-save", class: "primary", onclick: save }, "Enter"))));
  input.focus();
}

function showMe() {
  const me = document.getElementById("me");
  me.replaceChildren(h("span", {}, "you: "), h("b", { id: "my-name" }, savedName() || ""), " ",
    h("a", { href: "#", onclick: (e) => { e.preventDefault(); localStorage.removeItem("madang.name"); location.reload(); } }, "(change)"));
}

// ---- the connection ----------------------------------------------------------

const conn = {
  ws: null, welcome: null, handlers: new Set(), onOpen: null, retry: 500,
  connect(onOpen) {
    this.onOpen = onOpen;
    const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
    this.ws = ws;
    ws.onopen = () => {
      this.retry = 500;
      ws.send(JSON.stringify({ type: "hello", version: PROTOCOL_VERSION, name: savedName() }));
    };
    ws.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      if (msg.type === "welcome") { this.welcome = msg; setConnected(true); this.onOpen && this.onOpen(msg); return; }
      if (msg.type === "error") {
        if (["server_full", "too_many_watchers"].includes(msg.code)) showProblem(msg.message);
        // The lobby says this one above its rooms, which can still be joined.
        else if (!(msg.code === "too_many_rooms" && document.getElementById("lobby-problem"))) toast(msg.message);
      }
      for (const f of this.handlers) f(msg);
    };
    ws.onclose = () => {
      setConnected(false);
      setTimeout(() => this.connect(this.onOpen), this.retry);
      this.retry = Math.min(this.retry * 2, 5000);
    };
  },
  send(msg) { if (this.ws && this.ws.readyState === 1) this.ws.send(JSON.stringify(msg)); },
  on(f) { this.handlers.add(f); return () => this.handlers.delete(f); },
};

function setConnected(up) { document.body.classList.toggle("offline", !up); if (!up) toast("connection lost, reconnecting…"); }

function showProblem(text) {
  main.replaceChildren(h("div", { class: "panel" }, h("h2", {}, "Sorry"), h("p", { id: "problem" }, text)));
}

// What bingo.js shares of this page.
const bingoCtx = { h, conn, toast, showProblem, main, copyText };

// ---- lobby ---------------------------------------------------------------------

function clockText(tc) {
  if (!tc || tc.kind === "none") return "no clock";
  if (tc.kind === "per_move") return `${tc.ms / 1000} s per move`;
  return `${Math.round(tc.base_ms / 60000 * 10) / 10} min + ${tc.increment_ms / 1000} s`;
}

function seatText(seat) {
  if (!seat) return "(free)";
  return `${seat.name}${seat.kind === "engine" ? " (engine)" : seat.kind === "program" ? " (program)" : ""}`;
}

function lobbyPage() {
  const w = conn.welcome;
  const opponent = h("select", { id: "create-opponent" },
    h("option", { value: "person" }, "a person (send them the link)"),
    h("option", { value: "engine" }, "the computer"),
    h("option", { value: "program" }, "a program on the referee port"));
  const engine = h("select", { id: "create-engine" }, ...w.engines.map((n) => h("option", { value: n }, n)));
  const levels = { 1: "beginner, 0.2 s", 2: "easy, 0.5 s", 3: "medium, 1 s", 4: "strong, 3 s" };
  const level = h("select", { id: "create-level", "aria-label": "level" }, ...[1, 2, 3, 4].map((l) => h("option", { value: l, selected: l === 2 }, `level ${l} (${levels[l]})`)));
  const color = h("select", { id: "create-color" },
    h("option", { value: "black" }, "I play black"), h("option", { value: "white" }, "I play white"), h("option", { value: "random" }, "colour by chance"));
  const rule = h("select", { id: "create-rule" }, ...["renju", "renju-simplified", "freestyle", "standard"].map((r) => h("option", { value: r }, r)));
  const clock = h("select", { id: "create-clock" },
    h("option", { value: "none" }, "no clock"),
    h("option", { value: "move15" }, "15 s per move"),
    h("option", { value: "move60" }, "60 s per move"),
    h("option", { value: "game5" }, "5 min + 3 s"),
    h("option", { value: "game10" }, "10 min + 5 s"));
  const priv = h("input", { type: "checkbox", id: "create-private" });
  const engineRow = h("div", { class: "row" }, h("label", {}, "Engine ", engine), h("label", {}, "Strength ", level));
  const sync = () => { engineRow.hidden = opponent.value !== "engine"; };
  opponent.addEventListener("change", sync); sync();
  const clocks = {
    none: { kind: "none" }, move15: { kind: "per_move", ms: 15000 }, move60: { kind: "per_move", ms: 60000 },
    game5: { kind: "per_game", base_ms: 300000, increment_ms: 3000 }, game10: { kind: "per_game", base_ms: 600000, increment_ms: 5000 },
  };
  const create = () => conn.send({
    type: "create", game: "omok", opponent: opponent.value, engine: engine.value, level: Number(level.value),
    color: color.value, rule: rule.value, clock: clocks[clock.value], private: priv.checked,
  });
  const list = h("tbody", { id: "rooms" });
  const problem = h("p", { id: "lobby-problem", class: "problem", role: "alert", hidden: true });
  // The rooms first: someone who came to join or watch finds them without
  // scrolling past the forms (on a phone, two screens down).
  main.replaceChildren(
    h("div", { class: "panel" }, h("h2", {}, "Rooms"), problem,
      h("table", { class: "list cards" }, h("thead", {}, h("tr", {}, h("th", {}, "Players"), h("th", {}, "Game"), h("th", {}, "State"), h("th", {}, ""))), list),
      h("p", { class: "muted small" }, "Finished games: ", h("a", { href: "/games" }, "replays and downloads"), ".")),
    h("div", { class: "panel" }, h("h2", {}, "New Omok game"),
      h("div", { class: "row" }, h("label", {}, "Against ", opponent)), engineRow,
      h("div", { class: "row" }, h("label", {}, "Colour ", color), h("label", {}, "Rule ", rule), h("label", {}, "Clock ", clock)),
      h("div", { class: "row" }, h("label", {}, priv, " private (only by link)")),
      h("div", { class: "row" }, h("button", { id: "create", class: "primary", onclick: create }, "Create room"))),
    bingoCreatePanel(bingoCtx),
    h("div", { class: "panel" }, h("h2", {}, "Programs"),
      h("p", {}, "Bots written to the 3-byte Omok protocol connect to ", h("code", { id: "referee-addr" }, w.referee.addr),
        ` (rule ${w.referee.rule}, ${w.referee.turn_time_ms / 1000} s per move). Each one waits in a room listed above; take the other seat from here, or let two bots play and watch.`)));
  const off = conn.on((msg) => {
    if (msg.type === "created") { off(); location.assign(`/${msg.game === "bingo" ? "b" : "r"}/${msg.room}`); }
    if (msg.type === "lobby") renderRooms(list, msg.rooms);
    if (msg.type === "error" && msg.code === "too_many_rooms") {
      problem.textContent = `No new room: ${msg.message}. The rooms below can still be joined or watched.`;
      problem.hidden = false;
      problem.scrollIntoView({ block: "nearest" });
    }
  });
  conn.send({ type: "lobby" });
}

function renderRooms(list, rooms) {
  if (!rooms.length) { list.replaceChildren(h("tr", {}, h("td", { colspan: 4, class: "muted" }, "No rooms yet: create one."))); return; }
  list.replaceChildren(...rooms.map((r) => {
    if (r.game === "bingo") return bingoRow(bingoCtx, r);
    const black = r.seats.find((s) => s && s.color === "black");
    const white = r.seats.find((s) => s && s.color === "white");
    // A finished game names who played it, though a program left with it.
    const who = (seat, i) => seat ? seatText(seat) : r.players ? r.players[i] || "(left)" : seatText(seat);
    const free = r.seats.some((s) => !s);
    const state = r.status === "playing" ? "playing" : r.status === "over" ? "finished"
      : r.waiting_for_program ? "waiting for an opponent (program or person)" : "waiting for an opponent";
    return h("tr", { "data-room": r.id },
      h("td", { title: "black / white" }, `● ${who(black, 0)} / ○ ${who(white, 1)}`),
      h("td", {}, `${r.rule}, ${clockText(r.time_control)}`),
      h("td", {}, state, r.spectators ? ` · ${r.spectators} watching` : ""),
      h("td", {}, free && r.status === "waiting" ? h("a", { href: `/r/${r.id}`, class: "join" }, "join") : null, " ",
        h("a", { href: `/r/${r.id}?watch=1` }, "watch")));
  }));
}

// ---- a room ---------------------------------------------------------------------

function fmtClock(ms) {
  if (ms == null) return "∞";
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

// A touch screen has no hover to show where a stone will go, and fingers
// are wider than points: the first tap shows the stone, a second tap on the
// same point plays it.
const TOUCH = window.matchMedia("(pointer: coarse)").matches;

function roomPage(id) {
  const watchOnly = new URLSearchParams(location.search).has("watch");
  const join = roomJoin(conn, id, watchOnly, toast);
  // `resignAt`: the move count when Resign was pressed once; the second
  // press must come before the position changes (no timer: a slow hand or
  // a loaded machine must not turn the confirmation back into Resign).
  let mySeat = null, state = null, received = 0, numbers = false, preview = null, resignAt = null, lastOffer = null, myAsk = null;
  const boardBox = h("div", { class: "board-wrap", id: "board" });
  const board = createBoard(boardBox, (point) => {
    if (!state || state.status !== "playing" || !myColor()) return;
    if (myColor() !== state.to_move) { toast("Wait for your opponent's move"); return; }
    if (state.forbidden.includes(point)) { toast(`${point} is forbidden to black`); }
    if (TOUCH && !(preview && preview.point === point) && !state.moves.includes(point)) {
      preview = { point, color: myColor() };
      render();
      toast(`Tap ${point} again to play it`);
      return;
    }
    preview = null;
    hideToast();
    conn.send({ type: "move", point });
  });
  const status = h("div", { class: "status", id: "status", role: "status" });
  const players = h("div", { class: "players" });
  const offers = h("div", { id: "offers" });
  const moves = h("ol", { class: "moves", id: "moves" });
  const chatLog = h("div", { class: "chat-log", id: "chat-log", "aria-live": "polite" });
  const chatInput = h("input", { id: "chat-input", maxlength: 300, placeholder: "say something", "aria-label": "chat message" });
  const sendChat = () => { const t = chatInput.value.trim(); if (t) conn.send({ type: "chat", text: t }); chatInput.value = ""; };
  chatInput.addEventListener("keydown", (e) => { if (e.key === "Enter") sendChat(); });
  const analysis = h("div", { id: "analysis", class: "analysis" });
  // The position the engine view was asked for: a move makes it stale.
  let analysedAt = null;
  const analyseBtn = h("button", { id: "analyse", onclick: () => { analysedAt = state.moves.length; analysis.replaceChildren("thinking…"); conn.send({ type: "analyse" }); } }, "Engine view");
  const spectators = h("span", { id: "spectators", class: "muted" });
  const btn = (id, label, msg, cls) => h("button", { id, class: cls, onclick: () => conn.send(msg) }, label);
  const actions = h("div", { class: "row", id: "actions" });
  const link = `${location.origin}/r/${id}`;
  const copy = (id, text) => h("button", { id, class: "small", onclick: () => copyText(text) }, "Copy");
  main.replaceChildren(h("div", { class: "room-layout" },
    h("div", { class: "panel room-top" }, players, status, offers, actions),
    h("div", { class: "room-board" }, boardBox),
    h("div", { class: "room-side" },
      h("div", { class: "panel" }, h("h2", {}, "Moves"), moves,
        h("div", { class: "row" }, h("label", {}, h("input", { type: "checkbox", id: "numbers", onchange: (e) => { numbers = e.target.checked; render(); } }), " numbers"),
          analyseBtn),
        analysis),
      h("div", { class: "panel" }, h("h2", {}, "Chat ", spectators), chatLog,
        h("div", { class: "chat-form" }, chatInput, h("button", { id: "chat-send", onclick: sendChat }, "Send"))),
      h("div", { class: "panel links" },
        h("div", { class: "row" }, "Invite to play: ", h("span", { class: "link", id: "play-link" }, link), copy("copy-play", link)),
        h("div", { class: "row" }, "Invite to watch: ", h("span", { class: "link", id: "watch-link" }, `${link}?watch=1`), copy("copy-watch", `${link}?watch=1`))))));

  function myColor() {
    return mySeat != null && state && state.seats[mySeat] ? state.seats[mySeat].color : null;
  }

  function render() {
    if (!state) return;
    const mine = myColor();
    const line = state.result ? state.result.line : [];
    const myTurn = state.status === "playing" && mine === state.to_move;
    if (!myTurn) preview = null;
    drawBoard(board, { moves: state.moves, forbidden: state.status === "playing" ? state.forbidden : [], line, numbers, preview });
    board.svg.classList.toggle("my-turn", myTurn);
    document.title = `${myTurn ? "● Your move · " : ""}madang`;
    players.replaceChildren(...["black", "white"].map((c) => {
      const seat = state.seats.find((s) => s && s.color === c);
      // A seat freed after the game (a program plays one game and goes)
      // still shows who played it.
      const played = state.status === "over" ? state.result.players[c === "black" ? 0 : 1] || "(left)" : null;
      const name = seat ? seat.name : played || "(free seat)";
      const ms = state.clock[`${c}_ms`];
      const left = clockLeft(c);
      return h("div", { class: `player ${state.to_move === c ? "to-move" : ""}`, "data-color": c },
        h("div", { class: "player-line" }, h("span", { class: `stone-icon ${c}` }), h("span", { class: "player-name", title: name }, name)),
        // "you" goes under the name, which has the box's width to itself
        // (beside it, a name of eight letters was cut on a desktop).
        // A seat freed after the game waits for no one.
        h("div", { class: "muted small" }, mine === c ? [h("b", { class: "you" }, "you"), " · "] : null,
          seat ? [seat.kind, seat.connected ? null : " · away"] : played ? "left the room" : "waiting"),
        h("div", { class: `clock ${left != null && left < 10000 ? "low" : ""}`, id: `clock-${c}`, hidden: ms == null || state.status === "over" }, fmtClock(left)));
    }));
    // Someone who opened a play link of a full room watches: say so; and
    // one who came by a watch link is told too (no seat says "you").
    const watching = mySeat != null ? "" : watchOnly ? "You are watching." : state.status !== "waiting" ? "You are watching: both seats are taken." : "";
    const said = statusText(mine);
    status.textContent = watching ? `${said}${said.endsWith(".") ? "" : "."} ${watching}` : said;
    spectators.textContent = `· ${state.spectators} watching`;
    const items = [];
    for (let i = 0; i < state.moves.length; i += 2) {
      items.push(h("li", {}, h("span", { class: "mv" }, state.moves[i]), " ", h("span", { class: "mv" }, state.moves[i + 1] || "")));
    }
    moves.replaceChildren(...items);
    moves.scrollTop = moves.scrollHeight;
    offers.replaceChildren();
    const them = mine === "black" ? "white" : "black";
    // The answer buttons sit above the board: on a phone scrolled down to
    // the chat they are out of sight, so a new offer is also said below.
    const offer = !mine ? null : state.draw_offer === them ? "draw" : state.takeback_request === them ? "takeback" : null;
    const offerText = (o) => o === "draw" ? "Your opponent offers a draw (answer above the board)" : "Your opponent asks to take back a move (answer above the board)";
    if (offer && offer !== lastOffer) toast(offerText(offer));
    // An offer answered (or lapsed) is no longer announced.
    if (lastOffer && offer !== lastOffer) hideToast(offerText(lastOffer));
    lastOffer = offer;
    // An offer of mine that goes with no move and no end was refused: say
    // so, or the asker only sees its note vanish.
    const asked = !mine ? null : state.draw_offer === mine ? "draw" : state.takeback_request === mine ? "takeback" : null;
    const at = `${state.game}:${state.moves.length}:${state.status}`;
    if (myAsk && !asked && myAsk.at === at) toast(myAsk.what === "draw" ? "Your opponent declined the draw" : "Your opponent refused the takeback");
    myAsk = asked ? { what: asked, at } : null;
    if (mine && state.draw_offer === them) offers.append(h("div", { class: "offer" }, "Your opponent offers a draw. ", btn("accept-draw", "Accept", { type: "draw" }), " ", btn("decline", "Decline", { type: "decline" })));
    if (mine && state.takeback_request === them) offers.append(h("div", { class: "offer" }, "Your opponent asks to take back a move. ", btn("accept-takeback", "Allow", { type: "accept_takeback" }), " ", btn("decline", "Refuse", { type: "decline" })));
    if (mine && state.draw_offer === mine) offers.append(h("div", { class: "muted" }, "You offered a draw."));
    if (mine && state.takeback_request === mine) offers.append(h("div", { class: "muted" }, "You asked to take back."));
    actions.replaceChildren();
    const free = state.seats.some((s) => !s);
    const opponent = state.seats.find((s) => s && s.color === them);
    if (mine && state.status === "playing") {
      const armed = resignAt === state.moves.length;
      const resign = h("button", { id: "resign", class: armed ? "danger" : "", onclick: () => {
        // One slip of a finger must not lose the game: ask once more.
        if (armed) { resignAt = null; conn.send({ type: "resign" }); return; }
        resignAt = state.moves.length;
        render();
      } }, armed ? "Really resign?" : "Resign");
      const cancel = armed ? h("button", { id: "resign-cancel", onclick: () => { resignAt = null; render(); } }, "Keep playing") : null;
      const mineMoved = state.moves.length > (mine === "black" ? 0 : 1);
      // DOM append writes a null as the text "null": leave the absent out.
      actions.append(...[resign, cancel,
        state.draw_offer === them ? null : h("button", { id: "draw", disabled: state.draw_offer === mine, onclick: () => conn.send({ type: "draw" }) },
          state.draw_offer === mine ? "Draw offered" : "Offer draw")].filter(Boolean));
      if (opponent && opponent.kind !== "program" && mineMoved && !state.takeback_request) actions.append(btn("takeback", "Take back", { type: "takeback" }));
    }
    // The engine's help is for games against it and for watchers, never
    // a hidden hand in a game between people.
    analyseBtn.hidden = state.status !== "playing" || (mine != null && !(opponent && opponent.kind === "engine"));
    if (analyseBtn.hidden || state.moves.length !== analysedAt) { analysis.replaceChildren(); analysedAt = null; }
    if (mine && state.status === "over" && !opponent) {
      // A program plays one game per connection: it has gone, and no rematch can start here.
      actions.append(h("p", { id: "opponent-gone" }, "Your opponent has left this room. ", h("a", { href: "/" }, "Find another game in the lobby"), "."));
    } else if (mine && state.status === "over") {
      const asked = state.rematch.includes(mine);
      actions.append(btn("rematch", asked ? "Rematch asked…" : state.rematch.length ? "Accept rematch" : "Rematch (colours swapped)", { type: "rematch" }, asked ? "" : "primary"));
    }
    if (state.status === "waiting" && free) {
      if (mySeat == null && !watchOnly) actions.append(btn("take-seat", "Take the free seat", { type: "join", room: id, play: true }, "primary"));
      // A program waiting with no person in the room: anyone may set the computer on it, and watch.
      const programOnly = state.seats.some((s) => s && s.kind === "program") && !state.seats.some((s) => s && s.kind === "person");
      if (mySeat == null && programOnly) actions.append(btn("invite-engine", "Let the computer play it", { type: "invite_engine", level: 2 }));
      // The links panel is far below on a phone: the link to send is here too.
      if (mySeat != null) actions.append(h("button", { id: "copy-invite", class: "primary", onclick: () => copyText(link) }, "Copy the link to send"),
        btn("invite-engine", "Play the computer instead", { type: "invite_engine", level: 2 }));
    }
  }

  function statusText(mine) {
    if (state.status === "waiting") {
      return state.open_to_programs ? `Waiting for an opponent: a person with the link, or a program on the referee port, ${conn.welcome.referee.addr}.`
        : "Waiting for an opponent: send them the link.";
    }
    if (state.status === "over") {
      const r = state.result;
      const you = mine ? (r.winner == null ? "" : r.winner === mine ? " — you won" : " — you lost") : "";
      return `${resultText(r.winner, r.reason)}${you}.`;
    }
    const turn = state.to_move === mine ? "Your move" : `${capital(state.to_move)} to move`;
    const hint = state.to_move === mine && mine === "black" && state.forbidden.length ? " · ✕ marks points forbidden to black" : "";
    return `${turn} · move ${state.moves.length + 1}${hint}`;
  }

  conn.on((msg) => {
    if (msg.type === "state" && msg.room === id && msg.game === "bingo") { location.replace(`/b/${id}${location.search}`); return; }
    if (msg.type === "state" && msg.room === id) { state = msg; received = performance.now(); render(); }
    else if (msg.type === "moved" && msg.room === id) {
      // One move on top of the last state; one that does not fit asks for a complete state.
      if (state && msg.game === state.game && msg.seq === state.moves.length) {
        state = { ...state, moves: [...state.moves, msg.point], to_move: msg.to_move, forbidden: msg.forbidden, clock: msg.clock };
        received = performance.now(); render();
      } else join();
    }
    else if (msg.type === "you" && msg.room === id) { mySeat = msg.seat; render(); }
    else if (msg.type === "chat") {
      chatLog.append(h("div", { class: "chat-line" }, h("span", { class: "from" }, msg.from), ": ", h("span", { class: "text" }, msg.text)));
      chatLog.scrollTop = chatLog.scrollHeight;
    } else if (msg.type === "error" && msg.code === "busy" && analysedAt != null) {
      // The engine had no time for this one: offer the button again.
      analysis.replaceChildren(); analysedAt = null;
    } else if (msg.type === "analysis") {
      analysis.replaceChildren(...analysisView(msg.analysis, state));
    } else if (msg.type === "error" && msg.code === "no_such_room") {
      showProblem("This room does not exist (any more). Rooms close when everyone has left.");
    }
  });
  // Time left on colour `c`'s clock now (counted down from the state).
  function clockLeft(c) {
    const ms = state.clock[`${c}_ms`];
    return state.clock.running === c && ms != null ? ms - (performance.now() - received) : ms;
  }

  // Between states only the running clock changes: redraw its text alone,
  // so that buttons and the board are not replaced under a pointer or a
  // finger (a press that ends on a new element is no click).
  setInterval(() => {
    const c = state && state.status === "playing" && state.clock.running;
    const shown = c && document.getElementById(`clock-${c}`);
    if (!shown) return;
    const left = clockLeft(c);
    shown.textContent = fmtClock(left);
    shown.classList.toggle("low", left != null && left < 10000);
  }, 250);
  return join;
}

function capital(word) { return word[0].toUpperCase() + word.slice(1); }

function copyText(text) {
  if (navigator.clipboard) navigator.clipboard.writeText(text).then(() => toast("Link copied"), () => toast(text));
  else toast(text);
}

// The engine's view as engine GUIs show it: who stands better, how deep it
// looked, and the line it expects.
function analysisView(a, state) {
  if (!a) return ["No analysis: the game is over."];
  const side = state && state.to_move ? state.to_move : "black";
  const other = side === "black" ? "white" : "black";
  const win = Math.abs(a.score) > 29000;
  const ahead = a.score >= 0 ? side : other;
  // Depth 0 without a win: the engine answered a reply the position forces
  // (a five to block, the one move left) and did not search; its score then
  // says nothing, and "about even" would be wrong (an open four is lost).
  if (!win && a.depth === 0) {
    // The engine opens in the centre without searching either.
    const opening = state && state.moves.length === 0;
    return [h("div", { id: "analysis-verdict" }, h("b", {}, opening ? "The engine opens at " : `${capital(side)} must play `, h("span", { id: "analysis-best" }, a.best))),
      h("div", {}, opening ? "The centre: nothing to weigh yet." : "A forced reply: the engine plays it without weighing the position.")];
  }
  const verdict = win ? `${capital(ahead)} has a forced win`
    : Math.abs(a.score) < 50 ? "About even" : `${capital(ahead)} is better (${a.score > 0 ? "+" : ""}${a.score} for ${side})`;
  return [h("div", { id: "analysis-verdict" }, h("b", {}, verdict)),
    h("div", {}, "Best move ", h("b", { id: "analysis-best" }, a.best), ` · depth ${a.depth} · ${a.nodes.toLocaleString()} nodes`),
    h("div", { id: "analysis-pv", class: "pv" }, "Line: ", a.pv.length ? a.pv.join(" ") : a.best)];
}

// ---- records ----------------------------------------------------------------------

const RULES = ["renju", "renju-simplified", "freestyle", "standard"];

// What the loser did, for the reasons a newcomer would not read from the
// wire's word ("occupied", "invalid frame").
const LOSSES = {
  timeout: "ran out of time", "off-board": "played off the board", occupied: "played on a taken point",
  "out-of-turn": "moved out of turn", "unknown-command": "sent an unknown command",
  "invalid-frame": "sent an invalid message", disconnected: "lost the connection", abandoned: "left the game",
};

function resultText(winner, reason) {
  // A game the server stopped was not drawn: it has no result at all.
  if (reason === "shutdown") return "Stopped unfinished (the server shut down)";
  if (reason === "draw") return "Draw (the board is full)";
  if (winner === "draw" || winner == null) return `Draw (${String(reason).replace(/-/g, " ")})`;
  const loser = winner === "black" ? "white" : "black";
  const forbidden = /^forbidden \((.*)\)$/.exec(reason);
  const why = forbidden ? `${loser} played a forbidden ${forbidden[1]}` : LOSSES[reason] ? `${loser} ${LOSSES[reason]}` : String(reason).replace(/-/g, " ");
  return `${capital(winner)} wins (${why})`;
}

async function gamesPage() {
  const params = new URLSearchParams(location.search);
  const player = h("input", { id: "filter-player", placeholder: "player (exact name)", "aria-label": "player", value: params.get("player") || "" });
  // A value from the address that no option holds is kept, so that the server says what is wrong with it.
  const select = (id, label, values, chosen) => h("select", { id, "aria-label": label },
    h("option", { value: "" }, `any ${label}`), ...values.map(([v, text]) => h("option", { value: v, selected: v === chosen }, text)),
    ...(chosen && !values.some(([v]) => v === chosen) ? [h("option", { value: chosen, selected: true }, chosen)] : []));
  const game = select("filter-game", "game", [["omok", "Omok"], ["bingo", "bingo"]], params.get("game"));
  const rule = select("filter-rule", "rule", RULES.map((r) => [r, r]), params.get("rule"));
  const result = select("filter-result", "result", [["black", "black won"], ["white", "white won"], ["draw", "draw"]], params.get("result"));
  const list = h("tbody", { id: "games" });
  const load = async () => {
    const q = new URLSearchParams();
    for (const [k, e] of [["game", game], ["player", player], ["rule", rule], ["result", result]]) if (e.value.trim()) q.set(k, e.value.trim());
    history.replaceState(null, "", `/games${q.toString() ? `?${q}` : ""}`);
    const res = await fetch(`/api/games?${q}`);
    if (!res.ok) {
      list.replaceChildren(h("tr", {}, h("td", { colspan: 5, class: "muted", role: "alert" }, (await res.text()).trim())));
      return;
    }
    const games = await res.json();
    list.replaceChildren(...(games.length ? games.map((g) => h("tr", { "data-game": g.id },
      h("td", { "data-label": "Ended" }, new Date(g.ended_unix_ms).toLocaleString()),
      h("td", { "data-label": "Players" }, g.kind === "bingo" ? g.players.join(", ") : `${g.players[0]} (black) / ${g.players[1]} (white)`),
      h("td", { "data-label": "Rule" }, g.rule),
      h("td", { "data-label": "Result" }, g.kind === "bingo" ? `${g.result === "draw" ? "Draw" : `First: ${g.result}`}${g.reason === "bingo" ? "" : ` (${g.reason})`}` : resultText(g.result, g.reason)),
      h("td", {}, h("a", { href: `/games/${encodeURIComponent(g.id)}`, class: "replay" }, "replay")))) : [h("tr", {}, h("td", { colspan: 5, class: "muted" }, "No games match."))]));
  };
  player.addEventListener("keydown", (e) => { if (e.key === "Enter") load(); });
  game.addEventListener("change", load);
  rule.addEventListener("change", load);
  result.addEventListener("change", load);
  main.replaceChildren(h("div", { class: "panel" }, h("h2", {}, "Recent games"),
    h("div", { class: "row" }, player, game, rule, result, h("button", { id: "filter", onclick: load }, "Filter")),
    h("table", { class: "list cards" }, h("thead", {}, h("tr", {}, h("th", {}, "Ended"), h("th", {}, "Players"), h("th", {}, "Rule"), h("th", {}, "Result"), h("th", {}, ""))), list)));
  await load();
}

async function replayPage(id) {
  const res = await fetch(`/games/${encodeURIComponent(id)}.json`);
  if (!res.ok) { showProblem("No such game."); return; }
  const g = await res.json();
  if (g.game === "bingo") { bingoReplay(bingoCtx, id, g); return; }
  const moves = g.moves.map((m) => m.point);
  const setup = (g.setup || []).map(([p, c]) => [p, c]);
  // Moves alternate from the side that did not place the last setup stone
  // (black when there is none, or when the setup is balanced).
  const blacks = setup.filter((s) => s[1] === "black").length;
  const first = blacks > setup.length - blacks ? "white" : "black";
  const second = first === "black" ? "white" : "black";
  const stones = setup.concat(moves.map((m, i) => [m, i % 2 === 0 ? first : second]));
  const finalLine = g.reason === "five" && moves.length ? lineThrough(stones, moves[moves.length - 1]) : [];
  let at = moves.length;
  const boardBox = h("div", { class: "board-wrap", id: "board" });
  const board = createBoard(boardBox, null);
  const info = h("div", { class: "status", id: "replay-at", role: "status" });
  const list = h("ol", { class: "moves", id: "replay-moves" });
  const go = (n) => { at = Math.max(0, Math.min(moves.length, n)); show(); };
  const show = () => {
    drawBoard(board, { moves: moves.slice(0, at), numbers: true, setup, first, line: at === moves.length ? finalLine : [] });
    const t = g.moves[at - 1] && g.moves[at - 1].millis != null ? ` · ${(g.moves[at - 1].millis / 1000).toFixed(1)} s` : "";
    info.textContent = `move ${at} of ${moves.length}${at ? ` (${moves[at - 1]}${t})` : ""}`;
    for (const b of list.querySelectorAll("button")) b.classList.toggle("current", Number(b.dataset.move) === at);
  };
  const items = [];
  for (let i = 0; i < moves.length; i += 2) {
    const mv = (k) => k < moves.length ? h("button", { class: "mv", "data-move": k + 1, onclick: () => go(k + 1) }, moves[k]) : null;
    items.push(h("li", {}, mv(i), " ", mv(i + 1)));
  }
  list.replaceChildren(...items);
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement) return;
    const to = { ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: moves.length }[e.key];
    if (to !== undefined) { e.preventDefault(); go(to); }
  });
  const base = `/games/${encodeURIComponent(id)}`;
  const ctl = (bid, label, title, to) => h("button", { id: bid, title, "aria-label": title, onclick: () => go(to()) }, label);
  main.replaceChildren(h("div", { class: "room-layout" },
    h("div", { class: "panel room-top" }, h("h2", { id: "replay-title" }, `${g.black} (black) vs ${g.white} (white)`),
      h("p", { id: "replay-result" }, `${g.rule} · ${resultText(g.winner, g.reason)} · ${new Date(g.started_unix_ms).toLocaleString()}`),
      info,
      h("div", { class: "replay-controls" },
        ctl("first", "|◀", "first move", () => 0), ctl("prev", "◀", "previous move (←)", () => at - 1),
        ctl("next", "▶", "next move (→)", () => at + 1), ctl("last", "▶|", "last move", () => moves.length)),
      h("p", { class: "muted small" }, "Keys: ← → step, Home / End jump.")),
    h("div", { class: "room-board" }, boardBox),
    h("div", { class: "room-side" },
      h("div", { class: "panel" }, h("h2", {}, "Moves"), list),
      h("div", { class: "panel" }, "Download: ", h("a", { id: "export-sgf", href: `${base}.sgf`, download: `${id}.sgf` }, "SGF"), " · ",
        h("a", { id: "export-psq", href: `${base}.psq`, download: `${id}.psq` }, "PSQ"), " · ",
        h("a", { id: "export-json", href: `${base}.json`, download: `${id}.json` }, "JSON")))));
  show();
}

// ---- routing --------------------------------------------------------------------

function start() {
  if (savedName()) showMe();
  const path = location.pathname;
  const room = path.match(/^\/r\/([a-z0-9]+)$/);
  const bingoRoom = path.match(/^\/b\/([a-z0-9]+)$/);
  const game = path.match(/^\/games\/([^/]+)$/);
  if (path === "/games") { gamesPage(); return; }
  if (game) { replayPage(decodeURIComponent(game[1])); return; }
  let rejoin = null;
  conn.connect(() => {
    if (room) { rejoin = rejoin || roomPage(room[1]); rejoin(); }
    else if (bingoRoom) { rejoin = rejoin || bingoRoomPage(bingoCtx, bingoRoom[1]); rejoin(); }
    else lobbyPage();
  });
}

// Replays and the games list are read without a name; rooms ask for one.
if (savedName() || /^\/games(\/|$)/.test(location.pathname)) start(); else askName(start);
