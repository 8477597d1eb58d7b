// The Omok board as SVG: 15x15, column letters a-o left to right and row
// numbers 1-15 bottom to top (RIF), every point a target with
// data-point="h8". The page only draws what the server says.

const NS = "http://www.w3.org/2000/svg";
const SIZE = 15;
const LETTERS = "abcdefghijklmno";

export function pointName(x, y) { return LETTERS[x] + (y + 1); }

export function parsePoint(name) {
  const x = LETTERS.indexOf(name[0]);
  const y = parseInt(name.slice(1), 10) - 1;
  return x >= 0 && y >= 0 && y < SIZE ? [x, y] : null;
}

function el(tag, attrs, parent) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

// Screen position of a point: one unit per line, a margin of one unit for
// the coordinates.
const sx = (x) => x + 1;
const sy = (y) => SIZE - y;

export function createBoard(container, onPoint) {
  const svg = el("svg", { viewBox: "0 0 16 16", class: "board", role: "grid", "aria-label": "board" });
  el("rect", { x: 0, y: 0, width: 16, height: 16, class: "bg" }, svg);
  for (let i = 0; i < SIZE; i++) {
    el("line", { x1: sx(0), y1: sy(i), x2: sx(14), y2: sy(i) }, svg);
    el("line", { x1: sx(i), y1: sy(0), x2: sx(i), y2: sy(14) }, svg);
    // Coordinates sit clear of the edge stones (radius 0.46 around 1..15).
    const letter = el("text", { x: sx(i), y: 15.74, class: "coord" }, svg);
    letter.textContent = LETTERS[i];
    const num = el("text", { x: 0.3, y: sy(i), class: "coord" }, svg);
    num.textContent = String(i + 1);
  }
  for (const [x, y] of [[3, 3], [3, 11], [7, 7], [11, 3], [11, 11]]) {
    el("circle", { cx: sx(x), cy: sy(y), r: 0.1, class: "star" }, svg);
  }
  const layer = el("g", {}, svg);
  const hits = el("g", {}, svg);
  for (let x = 0; x < SIZE; x++) {
    for (let y = 0; y < SIZE; y++) {
      const name = pointName(x, y);
      const hit = el("rect", {
        x: sx(x) - 0.5, y: sy(y) - 0.5, width: 1, height: 1, rx: 0.46,
        class: "hit", "data-point": name, role: "gridcell", "aria-label": name,
      }, hits);
      hit.addEventListener("click", () => onPoint && onPoint(name));
    }
  }
  if (onPoint) keyboard(svg, onPoint);
  container.replaceChildren(svg);
  return { svg, layer, hits };
}

// Playing without a pointer: the board takes the focus (Tab), the arrow keys
// move a cursor from h8 and Enter or Space plays where it stands, as a
// click there would.
function keyboard(svg, onPoint) {
  let at = [7, 7];
  const cursor = el("rect", { width: 0.9, height: 0.9, rx: 0.2, class: "cursor" }, svg);
  const show = () => {
    cursor.setAttribute("x", sx(at[0]) - 0.45);
    cursor.setAttribute("y", sy(at[1]) - 0.45);
    svg.setAttribute("aria-label", `board, cursor on ${pointName(...at)}: arrow keys move, Enter plays`);
  };
  const steps = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };
  svg.setAttribute("tabindex", "0");
  svg.addEventListener("keydown", (e) => {
    const step = steps[e.key];
    if (step) {
      at = at.map((v, i) => Math.max(0, Math.min(SIZE - 1, v + step[i])));
      show();
    } else if (e.key === "Enter" || e.key === " ") {
      onPoint(pointName(...at));
    } else {
      return;
    }
    e.preventDefault();
  });
  show();
}

// Draws stones (numbered if asked; `setup` stones, as [point, colour], come
// before the moves, which alternate from `first`), the last move, black's
// forbidden points, the winning line and a stone about to be played
// (`preview`, shown until a touch confirms it).
export function drawBoard(board, { moves = [], forbidden = [], line = [], numbers = false, setup = [], first = "black", preview = null }) {
  const { layer, hits } = board;
  layer.replaceChildren();
  const stone = (name, color) => {
    const p = parsePoint(name);
    if (p) el("circle", { cx: sx(p[0]), cy: sy(p[1]), r: 0.46, class: color, "data-stone": name, "data-color": color }, layer);
    return p;
  };
  for (const [name, color] of setup) stone(name, color);
  const second = first === "black" ? "white" : "black";
  moves.forEach((name, i) => {
    const color = i % 2 === 0 ? first : second;
    const p = stone(name, color);
    if (p && numbers) {
      const last = i === moves.length - 1 ? " last-num" : "";
      const t = el("text", { x: sx(p[0]), y: sy(p[1]), class: `num on-${color}${last}` }, layer);
      t.textContent = String(i + 1);
    }
  });
  const last = moves.length ? parsePoint(moves[moves.length - 1]) : null;
  if (last && !numbers) el("circle", { cx: sx(last[0]), cy: sy(last[1]), r: 0.2, class: "last", "data-last": moves[moves.length - 1] }, layer);
  const ghost = preview && parsePoint(preview.point);
  if (ghost) el("circle", { cx: sx(ghost[0]), cy: sy(ghost[1]), r: 0.46, class: `preview ${preview.color}`, "data-preview": preview.point }, layer);
  for (const name of forbidden) {
    const p = parsePoint(name);
    if (!p) continue;
    const d = 0.18;
    const g = el("g", { class: "forbidden", "data-forbidden": name }, layer);
    el("line", { x1: sx(p[0]) - d, y1: sy(p[1]) - d, x2: sx(p[0]) + d, y2: sy(p[1]) + d, class: "forbidden" }, g);
    el("line", { x1: sx(p[0]) - d, y1: sy(p[1]) + d, x2: sx(p[0]) + d, y2: sy(p[1]) - d, class: "forbidden" }, g);
  }
  for (const name of line) {
    const p = parsePoint(name);
    if (p) el("circle", { cx: sx(p[0]), cy: sy(p[1]), r: 0.5, class: "five", "data-five": name }, layer);
  }
  const forbiddenSet = new Set(forbidden);
  for (const hit of hits.children) {
    if (forbiddenSet.has(hit.dataset.point)) hit.setAttribute("data-forbidden", "1");
    else hit.removeAttribute("data-forbidden");
  }
}

// The five (or more) in a row through `point`, or [] (for replays, whose
// records keep no line; live games get theirs from the server).
export function lineThrough(stones, point) {
  const at = new Map(stones.map(([name, color]) => [name, color]));
  const color = at.get(point);
  const p = parsePoint(point);
  if (!color || !p) return [];
  for (const [dx, dy] of [[1, 0], [0, 1], [1, 1], [1, -1]]) {
    const line = [point];
    for (const sign of [1, -1]) {
      for (let k = 1; k < SIZE; k++) {
        const x = p[0] + sign * k * dx, y = p[1] + sign * k * dy;
        if (x < 0 || y < 0 || x >= SIZE || y >= SIZE || at.get(pointName(x, y)) !== color) break;
        line.push(pointName(x, y));
      }
    }
    if (line.length >= 5) return line;
  }
  return [];
}
