// madang in the browser: lobby, Omok rooms, replays. The page speaks only
// the documented WebSocket protocol (docs/web-protocol.md) and draws what
// the server sends; every text from others is set as text, never markup.

import { createBoard, drawBoard } from "/assets/board.js";
import { bingoCreatePanel, bingoReplay, bingoRoomPage, bingoRow } from "/assets/bingo.js";

const main = document.getElementById("main");
const PROTOCOL_VERSION = 1;

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
        if (msg.code === "server_full" || msg.code === "too_many_rooms") showProblem(msg.message);
        else toast(msg.message);
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
const bingoCtx = { h, conn, toast, showProblem, main };

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
  const level = h("select", { id: "create-level" }, ...[1, 2, 3, 4].map((l) => h("option", { value: l, selected: l === 2 }, `level ${l}`)));
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
  const engineRow = h("div", { class: "row" }, "Engine: ", engine, level);
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
  main.replaceChildren(
    h("div", { class: "panel" }, h("h2", {}, "New Omok game"),
      h("div", { class: "row" }, "Against ", opponent), engineRow,
      h("div", { class: "row" }, color, rule, clock),
      h("div", { class: "row" }, h("label", {}, priv, " private (only by link)")),
      h("div", { class: "row" }, h("button", { id: "create", class: "primary", onclick: create }, "Create room"))),
    bingoCreatePanel(bingoCtx),
    h("div", { class: "panel" }, h("h2", {}, "Rooms"),
      h("table", { class: "list" }, h("thead", {}, h("tr", {}, h("th", {}, "Black / White"), h("th", {}, "Game"), h("th", {}, "State"), h("th", {}, ""))), list)),
    h("div", { class: "panel" }, h("h2", {}, "Programs"),
      h("p", {}, "Bots written to the 3-byte Omok protocol connect to ", h("code", { id: "referee-addr" }, w.referee.addr),
        ` (rule ${w.referee.rule}, ${w.referee.turn_time_ms / 1000} s per move). Each one waits in a room listed above; take the other seat from here, or let two bots play and watch.`)));
  const off = conn.on((msg) => {
    if (msg.type === "created") { off(); location.assign(`/${msg.game === "bingo" ? "b" : "r"}/${msg.room}`); }
    if (msg.type === "lobby") renderRooms(list, msg.rooms);
  });
  conn.send({ type: "lobby" });
}

function renderRooms(list, rooms) {
  if (!rooms.length) { list.replaceChildren(h("tr", {}, h("td", { colspan: 4, class: "muted" }, "No rooms yet: create one."))); return; }
  list.replaceChildren(...rooms.map((r) => {
    if (r.game === "bingo") return bingoRow(bingoCtx, r);
    const black = r.seats.find((s) => s && s.color === "black");
    const white = r.seats.find((s) => s && s.color === "white");
    const free = r.seats.some((s) => !s);
    const state = r.status === "playing" ? "playing" : r.status === "over" ? "finished"
      : r.waiting_for_program ? "waiting for an opponent (program or person)" : "waiting for an opponent";
    return h("tr", { "data-room": r.id },
      h("td", {}, `${seatText(black)} / ${seatText(white)}`),
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

function roomPage(id) {
  const watchOnly = new URLSearchParams(location.search).has("watch");
  let mySeat = null, state = null, received = 0, numbers = false;
  const boardBox = h("div", { class: "board-wrap", id: "board" });
  const board = createBoard(boardBox, (point) => {
    if (!state || state.status !== "playing" || myColor() !== state.to_move) return;
    if (state.forbidden.includes(point)) { toast(`${point} is forbidden to black`); }
    conn.send({ type: "move", point });
  });
  const status = h("div", { class: "status", id: "status" });
  const players = h("div", { class: "players" });
  const offers = h("div", { id: "offers" });
  const moves = h("div", { class: "moves", id: "moves" });
  const chatLog = h("div", { class: "chat-log", id: "chat-log", "aria-live": "polite" });
  const chatInput = h("input", { id: "chat-input", maxlength: 300, placeholder: "say something" });
  const sendChat = () => { const t = chatInput.value.trim(); if (t) conn.send({ type: "chat", text: t }); chatInput.value = ""; };
  chatInput.addEventListener("keydown", (e) => { if (e.key === "Enter") sendChat(); });
  const analysis = h("div", { id: "analysis", class: "muted" });
  const spectators = h("span", { id: "spectators" });
  const btn = (id, label, msg) => h("button", { id, onclick: () => conn.send(msg) }, label);
  const actions = h("div", { class: "row", id: "actions" });
  const link = `${location.origin}/r/${id}`;
  main.replaceChildren(h("div", { class: "room-layout" },
    h("div", {}, boardBox),
    h("div", {},
      h("div", { class: "panel" }, players, status, offers, actions),
      h("div", { class: "panel" }, h("h2", {}, "Moves"), moves,
        h("div", { class: "row" }, h("label", {}, h("input", { type: "checkbox", id: "numbers", onchange: (e) => { numbers = e.target.checked; render(); } }), " numbers"),
          h("button", { id: "analyse", onclick: () => { analysis.textContent = "thinking…"; conn.send({ type: "analyse" }); } }, "Engine view")),
        analysis),
      h("div", { class: "panel" }, h("h2", {}, "Chat ", spectators), chatLog,
        h("div", { class: "chat-form" }, chatInput, h("button", { id: "chat-send", onclick: sendChat }, "Send"))),
      h("div", { class: "panel" }, h("div", {}, "Invite by link: ", h("span", { class: "link", id: "play-link" }, link)),
        h("div", {}, "Watch link: ", h("span", { class: "link", id: "watch-link" }, `${link}?watch=1`))))));

  function myColor() {
    return mySeat != null && state && state.seats[mySeat] ? state.seats[mySeat].color : null;
  }

  function render() {
    if (!state) return;
    const mine = myColor();
    const line = state.result ? state.result.line : [];
    drawBoard(board, { moves: state.moves, forbidden: state.status === "playing" ? state.forbidden : [], line, numbers });
    board.svg.classList.toggle("my-turn", state.status === "playing" && mine === state.to_move);
    players.replaceChildren(...["black", "white"].map((c) => {
      const seat = state.seats.find((s) => s && s.color === c);
      const ms = state.clock[`${c}_ms`];
      const running = state.clock.running === c;
      const left = running && ms != null ? ms - (performance.now() - received) : ms;
      return h("div", { class: `player ${state.to_move === c ? "to-move" : ""}`, "data-color": c },
        h("div", {}, h("span", { class: `stone-icon ${c}` }), h("span", { class: "player-name" }, seat ? seat.name : "(free seat)"),
          seat && seat.kind !== "person" ? h("span", { class: "muted" }, ` · ${seat.kind}`) : null,
          seat && !seat.connected ? h("span", { class: "muted" }, " · away") : null,
          mine === c ? h("b", {}, " (you)") : null),
        h("div", { class: `clock ${left != null && left < 10000 ? "low" : ""}`, id: `clock-${c}` }, fmtClock(left)));
    }));
    status.textContent = statusText(mine);
    spectators.textContent = `· ${state.spectators} watching`;
    moves.replaceChildren(...state.moves.map((m, i) => h("span", {}, `${i + 1}. ${m} `)));
    moves.scrollTop = moves.scrollHeight;
    offers.replaceChildren();
    const them = mine === "black" ? "white" : "black";
    if (mine && state.draw_offer === them) offers.append(h("div", { class: "offer" }, "Your opponent offers a draw. ", btn("accept-draw", "Accept", { type: "draw" }), " ", btn("decline", "Decline", { type: "decline" })));
    if (mine && state.takeback_request === them) offers.append(h("div", { class: "offer" }, "Your opponent asks to take back a move. ", btn("accept-takeback", "Allow", { type: "accept_takeback" }), " ", btn("decline", "Refuse", { type: "decline" })));
    if (mine && state.draw_offer === mine) offers.append(h("div", { class: "muted" }, "You offered a draw."));
    if (mine && state.takeback_request === mine) offers.append(h("div", { class: "muted" }, "You asked to take back."));
    actions.replaceChildren();
    const free = state.seats.some((s) => !s);
    if (mine && state.status === "playing") {
      actions.append(btn("resign", "Resign", { type: "resign" }), btn("draw", "Offer draw", { type: "draw" }), btn("takeback", "Take back", { type: "takeback" }));
    }
    if (mine && state.status === "over") actions.append(btn("rematch", state.rematch.includes(mine) ? "Rematch asked…" : "Rematch (colours swapped)", { type: "rematch" }));
    if (state.status === "waiting" && free) {
      if (mySeat == null && !watchOnly) actions.append(btn("take-seat", "Take the free seat", { type: "join", room: id, play: true }));
      actions.append(btn("invite-engine", "Seat the computer", { type: "invite_engine", level: 2 }));
    }
  }

  function statusText(mine) {
    if (state.status === "waiting") {
      return state.open_to_programs ? "Waiting for an opponent: a person with the link, or a program on the referee port."
        : "Waiting for an opponent: send them the link.";
    }
    if (state.status === "over") {
      const r = state.result;
      const who = r.winner ? `${r.winner[0].toUpperCase()}${r.winner.slice(1)} wins` : "Draw";
      const you = mine ? (r.winner == null ? "" : r.winner === mine ? " — you won" : " — you lost") : "";
      return `${who} (${r.reason.replace(/-/g, " ")})${you}.`;
    }
    const turn = state.to_move === mine ? "Your move" : `${state.to_move[0].toUpperCase()}${state.to_move.slice(1)} to move`;
    return `${turn} · move ${state.moves.length + 1}`;
  }

  conn.on((msg) => {
    if (msg.type === "state" && msg.room === id && msg.game === "bingo") { location.replace(`/b/${id}${location.search}`); return; }
    if (msg.type === "state" && msg.room === id) { state = msg; received = performance.now(); render(); }
    else if (msg.type === "you" && msg.room === id) { mySeat = msg.seat; render(); }
    else if (msg.type === "chat") {
      chatLog.append(h("div", { class: "chat-line" }, h("span", { class: "from" }, msg.from), ": ", h("span", { class: "text" }, msg.text)));
      chatLog.scrollTop = chatLog.scrollHeight;
    } else if (msg.type === "analysis") {
      const a = msg.analysis;
      analysis.textContent = a ? `best ${a.best} · score ${a.score} · depth ${a.depth} · pv ${a.pv.join(" ")}` : "no analysis (the game is over)";
    } else if (msg.type === "error" && msg.code === "no_such_room") {
      showProblem("This room does not exist (any more). Rooms close when everyone has left.");
    }
  });
  setInterval(() => { if (state && state.clock.running) render(); }, 250);
  return () => conn.send({ type: "join", room: id, play: !watchOnly });
}

// ---- records ----------------------------------------------------------------------

async function gamesPage() {
  const params = new URLSearchParams(location.search);
  const player = h("input", { id: "filter-player", placeholder: "player (exact name)", value: params.get("player") || "" });
  const list = h("tbody", { id: "games" });
  const load = async () => {
    const q = new URLSearchParams({ player: player.value.trim() });
    const games = await (await fetch(`/api/games?${q}`)).json();
    list.replaceChildren(...(games.length ? games.map((g) => h("tr", {},
      h("td", {}, new Date(g.ended_unix_ms).toLocaleString()),
      h("td", {}, `${g.players[0]} / ${g.players[1]}`), h("td", {}, g.rule),
      h("td", {}, `${g.result} (${g.reason})`),
      h("td", {}, h("a", { href: `/games/${encodeURIComponent(g.id)}` }, "replay")))) : [h("tr", {}, h("td", { class: "muted" }, "No games yet."))]));
  };
  player.addEventListener("keydown", (e) => { if (e.key === "Enter") load(); });
  main.replaceChildren(h("div", { class: "panel" }, h("h2", {}, "Recent games"),
    h("div", { class: "row" }, player, h("button", { id: "filter", onclick: load }, "Filter")),
    h("table", { class: "list" }, h("thead", {}, h("tr", {}, h("th", {}, "Ended"), h("th", {}, "Black / White"), h("th", {}, "Rule"), h("th", {}, "Result"), h("th", {}, ""))), list)));
  await load();
}

async function replayPage(id) {
  const res = await fetch(`/games/${encodeURIComponent(id)}.json`);
  if (!res.ok) { showProblem("No such game."); return; }
  const g = await res.json();
  if (g.game === "bingo") { bingoReplay(bingoCtx, id, g); return; }
  const moves = g.moves.map((m) => m.point);
  let at = moves.length;
  const boardBox = h("div", { class: "board-wrap", id: "board" });
  const board = createBoard(boardBox, null);
  const info = h("div", { class: "status", id: "replay-at" });
  const show = () => {
    drawBoard(board, { moves: moves.slice(0, at), numbers: true });
    info.textContent = `move ${at} of ${moves.length}${at ? ` (${moves[at - 1]})` : ""}`;
  };
  const go = (n) => { at = Math.max(0, Math.min(moves.length, n)); show(); };
  document.addEventListener("keydown", (e) => {
    if (e.key === "ArrowLeft") go(at - 1); else if (e.key === "ArrowRight") go(at + 1);
    else if (e.key === "Home") go(0); else if (e.key === "End") go(moves.length);
  });
  const base = `/games/${encodeURIComponent(id)}`;
  main.replaceChildren(h("div", { class: "room-layout" }, h("div", {}, boardBox),
    h("div", { class: "panel" }, h("h2", {}, `${g.black} (black) vs ${g.white} (white)`),
      h("p", {}, `${g.rule} · ${g.result} (${g.reason}) · ${new Date(g.started_unix_ms).toLocaleString()}`),
      info,
      h("div", { class: "replay-controls" },
        h("button", { id: "first", onclick: () => go(0) }, "⏮"), h("button", { id: "prev", onclick: () => go(at - 1) }, "◀"),
        h("button", { id: "next", onclick: () => go(at + 1) }, "▶"), h("button", { id: "last", onclick: () => go(moves.length) }, "⏭")),
      h("p", {}, "Download: ", h("a", { href: `${base}.sgf` }, "SGF"), " · ", h("a", { href: `${base}.psq` }, "PSQ"), " · ", h("a", { href: `${base}.json` }, "JSON")))));
  show();
}

// ---- routing --------------------------------------------------------------------

function start() {
  showMe();
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

if (savedName()) start(); else askName(start);
