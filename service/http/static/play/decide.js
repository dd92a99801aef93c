// A decision in the player's own words and clicks (issue 21): one level of a title's
// prompt at a time (`engine.core.choices.Prompt.as_dict()`), as the choices endpoint
// `POST /games/{game}/seats/{seat}/choices` answers it for the picks so far.
//
// The ask is shown as buttons labelled in words (a select when there are many), a number
// field with its bounds and buttons for its named values ("pass"), or a small sheet of
// number fields; options that are places on the board make that element of the picture
// clickable (`Board`). A breadcrumb names what was picked, with a way back one pick;
// once the picks make an order, the order is one sentence with a button to send it (and,
// when the prompt still asks, the further picks beside it).
//
// Everything is built with DOM calls and textContent: nothing from the server is markup.

const MANY = 12; // more options than this: a select instead of buttons

function el(tag, attrs = {}, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids) if (kid) node.append(kid);
  return node;
}

let uid = 0;
const nextId = (stem) => `${stem}-${++uid}`;

// -- the board ------------------------------------------------------------------------------
// The title's SVG picture with the current ask's places marked: each target element gets
// role=button, tabindex=0 and its option's label (shown on hover and on keyboard focus,
// picked with a click, Enter or Space), and a halo drawn over it (clickable too, so a small
// target is easy to hit on a phone). Every other element stays inert.
export class Board {
  constructor(figure) {
    this.figure = figure;
    this.svg = figure ? figure.querySelector("svg") : null;
    this.targets = new Map(); // element -> {option, pick}
    this.halos = null;
    this.tip = null;
    if (!this.svg) return;
    this.tip = el("div", { class: "board-tip", role: "tooltip", id: nextId("board-tip"), hidden: true });
    figure.append(this.tip);
    const target = (ev) => {
      const hit = ev.target.closest && ev.target.closest(".pick, .halo");
      if (!hit) return null;
      return hit.classList.contains("halo") ? hit.__target : hit;
    };
    this.svg.addEventListener("click", (ev) => {
      const t = target(ev);
      if (t && this.targets.has(t)) { ev.preventDefault(); this.targets.get(t).pick(); }
    });
    this.svg.addEventListener("keydown", (ev) => {
      const t = target(ev);
      if (!t || !this.targets.has(t)) return;
      if (ev.key === "Enter" || ev.key === " " || ev.key === "Spacebar") { ev.preventDefault(); this.targets.get(t).pick(); return; }
      // the arrows, Home and End walk the lit places (Tab and Shift+Tab do too, one by one)
      const all = [...this.targets.keys()];
      const i = all.indexOf(t);
      const to = { ArrowRight: i + 1, ArrowDown: i + 1, ArrowLeft: i - 1, ArrowUp: i - 1, Home: 0, End: all.length - 1 }[ev.key];
      if (to === undefined) return;
      ev.preventDefault();
      all[(to + all.length) % all.length].focus();
    });
    const show = (ev) => { const t = target(ev); if (t && this.targets.has(t)) this.showTip(t); };
    const hide = (ev) => { const t = target(ev); if (t && this.targets.has(t)) this.hideTip(); };
    this.svg.addEventListener("pointerover", show);
    this.svg.addEventListener("pointerout", hide);
    // the focused place: its halo ringed (the visible focus of a place on the board)
    this.svg.addEventListener("focusin", (ev) => { show(ev); this.ring(target(ev)); });
    this.svg.addEventListener("focusout", (ev) => { hide(ev); this.ring(null); });
  }

  // Mark `options` (those with a `place` that the picture has) as targets; `pick(option)`
  // is called when one is clicked. Returns how many were marked.
  mark(options, pick) {
    this.clear();
    if (!this.svg) return 0;
    for (const option of options) {
      if (!option.place) continue;
      const node = this.svg.querySelector(`[id="${CSS.escape(option.place)}"]`);
      if (!node || this.targets.has(node)) continue;
      const words = option.hint ? `${option.label}: ${option.hint}` : option.label;
      node.classList.add("pick");
      node.setAttribute("tabindex", "0");
      node.setAttribute("role", "button");
      node.setAttribute("aria-label", words);
      node.setAttribute("aria-describedby", this.tip.id);
      this.targets.set(node, { option, words, pick: () => pick(option) });
    }
    if (this.targets.size) {
      this.svg.classList.add("choosing");
      this.figure.classList.add("choosing");
      // A picture is an image; while it offers places it is a group of buttons (an image's
      // parts are not read out, so buttons inside one would be hidden from screen readers).
      if (this.svg.getAttribute("role") === "img") { this.svg.setAttribute("role", "group"); this.wasImg = true; }
      this.drawHalos();
    }
    return this.targets.size;
  }

  clear() {
    for (const node of this.targets.keys()) {
      node.classList.remove("pick", "hot");
      for (const a of ["tabindex", "role", "aria-label", "aria-describedby"]) node.removeAttribute(a);
    }
    this.targets.clear();
    if (this.halos) { this.halos.remove(); this.halos = null; }
    if (this.svg) this.svg.classList.remove("choosing");
    if (this.svg && this.wasImg) { this.svg.setAttribute("role", "img"); this.wasImg = false; }
    if (this.figure) this.figure.classList.remove("choosing");
    this.hideTip();
  }

  // A rounded halo over each target, in the picture's own coordinates (so it scales with it).
  drawHalos() {
    const NS = "http://www.w3.org/2000/svg";
    this.halos = document.createElementNS(NS, "g");
    this.halos.setAttribute("class", "halos");
    this.halos.setAttribute("aria-hidden", "true");
    const toSvg = this.svg.getScreenCTM();
    if (!toSvg) return;
    const inv = toSvg.inverse();
    const drawn = [];
    for (const node of this.targets.keys()) {
      let box;
      try { box = node.getBBox(); } catch (e) { continue; }
      const m = node.getScreenCTM();
      if (!m) continue;
      const corners = [[box.x, box.y], [box.x + box.width, box.y], [box.x, box.y + box.height],
                       [box.x + box.width, box.y + box.height]].map(([x, y]) => {
        const p = new DOMPoint(x, y).matrixTransform(m).matrixTransform(inv);
        return [p.x, p.y];
      });
      const xs = corners.map((c) => c[0]), ys = corners.map((c) => c[1]);
      const pad = 3, least = 16; // at least this wide and high: a road space is tiny
      let x0 = Math.min(...xs) - pad, x1 = Math.max(...xs) + pad;
      let y0 = Math.min(...ys) - pad, y1 = Math.max(...ys) + pad;
      if (x1 - x0 < least) { const c = (x0 + x1) / 2; x0 = c - least / 2; x1 = c + least / 2; }
      if (y1 - y0 < least) { const c = (y0 + y1) / 2; y0 = c - least / 2; y1 = c + least / 2; }
      const halo = document.createElementNS(NS, "rect");
      halo.setAttribute("class", "halo");
      halo.setAttribute("x", x0.toFixed(1));
      halo.setAttribute("y", y0.toFixed(1));
      halo.setAttribute("width", (x1 - x0).toFixed(1));
      halo.setAttribute("height", (y1 - y0).toFixed(1));
      halo.setAttribute("rx", Math.min(8, (x1 - x0) / 2, (y1 - y0) / 2).toFixed(1));
      halo.__target = node;
      this.targets.get(node).halo = halo;
      drawn.push([(x1 - x0) * (y1 - y0), halo]);
    }
    // the larger first, so that a small target inside a large one stays on top (clickable)
    drawn.sort((a, b) => b[0] - a[0]);
    for (const [, halo] of drawn) this.halos.append(halo);
    this.svg.append(this.halos);
  }

  // The option's element and halo lit (a button of the same option has the pointer or focus).
  light(option, on) {
    for (const [node, t] of this.targets) {
      if (t.option === option) {
        node.classList.toggle("hot", on);
        if (t.halo) t.halo.classList.toggle("hot", on);
      }
    }
  }

  // The halo of `node` (a lit place) drawn as focused; none when `node` is null.
  ring(node) {
    for (const t of this.targets.values()) if (t.halo) t.halo.classList.remove("focus");
    const t = node && this.targets.get(node);
    if (t && t.halo) t.halo.classList.add("focus");
  }

  showTip(node) {
    const t = this.targets.get(node);
    if (!t || !this.tip) return;
    this.tip.textContent = t.words;
    this.tip.hidden = false;
    const fig = this.figure.getBoundingClientRect();
    const r = node.getBoundingClientRect();
    const left = r.left - fig.left + this.figure.scrollLeft + r.width / 2;
    const top = r.top - fig.top + this.figure.scrollTop;
    this.tip.style.left = `${Math.max(4, Math.min(left - this.tip.offsetWidth / 2, this.figure.clientWidth - this.tip.offsetWidth - 4))}px`;
    this.tip.style.top = `${Math.max(2, top - this.tip.offsetHeight - 6)}px`;
    this.light(t.option, true);
  }

  hideTip() {
    if (this.tip) this.tip.hidden = true;
    for (const [node, t] of this.targets) {
      node.classList.remove("hot");
      if (t.halo) t.halo.classList.remove("hot");
    }
  }
}

// -- a decision --------------------------------------------------------------------------
// `root`: the element to draw into. Options:
//   prompt: the first level (picks []), as the page was given it (or null: asked for);
//   ask(picks): a promise of the prompt after `picks` (rejects with an Error in words);
//   send(prompt): sends a complete prompt's order (or action); resolves when answered;
//   board: the page's Board (or null); onBoard(decision): whether it may use the board now;
//   sendLabel: the send button's words; idPrefix: ids of its parts (the order's: "send").
export class Decision {
  constructor(root, opts) {
    this.root = root;
    this.opts = opts;
    this.first = opts.prompt || null;
    this.prompt = this.first;
    this.busy = false;
  }

  get picks() { return this.prompt ? this.prompt.picks || [] : []; }

  // Draw the first level, or the level after `picks` (kept from before a reload; when
  // they no longer hold, the first level).
  // `moved`: the keyboard goes to its next question (it took over a pick made on a part
  // of the page that was reloaded meanwhile).
  // `viaBoard`: that pick was made on the board (its next question is brought into view).
  async start(picks = [], moved = false, viaBoard = false) {
    if (picks.length) {
      try {
        this.prompt = await this.opts.ask(picks);
      } catch (e) {
        this.prompt = this.first;
      }
    }
    this.render(moved, viaBoard);
  }

  async go(picks) {
    const viaBoard = this.viaBoard;
    this.viaBoard = false;
    this.pickedOnBoard = viaBoard; // (for a decision that takes this one's picks over)
    if (this.busy) return;
    this.busy = true;
    this.root.setAttribute("aria-busy", "true");
    for (const b of this.root.querySelectorAll("button, input, select")) b.disabled = true;
    try {
      this.prompt = picks.length ? await this.opts.ask(picks) : this.first;
      this.busy = false;
      this.render(true, viaBoard);
      if (this.opts.changed) this.opts.changed(this);
    } catch (e) {
      this.busy = false;
      this.render(true, viaBoard);
      this.say(e.message, true);
    } finally {
      this.busy = false;
      this.root.removeAttribute("aria-busy");
    }
  }

  pick(value) { return this.go([...this.picks, value]); }
  back() { return this.go(this.picks.slice(0, -1)); }
  restart() { return this.go([]); }

  say(text, bad) {
    const out = this.root.querySelector(".decision-status");
    if (!out) return;
    out.textContent = text || "";
    out.classList.toggle("bad", !!bad);
  }

  // The places this decision offers on the board now (none while it is not its turn to).
  placeOptions() {
    const ask = this.prompt && this.prompt.ask;
    return ask && ask.options ? ask.options.filter((o) => o.place) : [];
  }

  showOnBoard() {
    const board = this.opts.board;
    if (!board) return 0;
    if (this.opts.onBoard && !this.opts.onBoard(this)) return 0;
    return board.mark(this.placeOptions(), (o) => { this.viaBoard = true; return this.pick(o.value); });
  }

  // `viaBoard`: the pick was made on the board, which may be far from the decision (above
  // or below it): its next question is brought into view with the focus.
  render(moved, viaBoard = false) {
    const p = this.prompt;
    const pre = this.opts.idPrefix || "d";
    this.root.replaceChildren();
    if (!p) return;
    const box = el("div", { class: "decision" });
    if (p.say) box.append(el("p", { class: "say", text: p.say }));
    const chosen = p.chosen || [];
    if (chosen.length) {
      const crumbs = el("ol", { class: "picked" });
      for (const c of chosen) crumbs.append(el("li", { text: c }));
      const nav = el("nav", { class: "picked-bar", "aria-label": "What you picked" },
        el("span", { class: "picked-h", text: "You picked:" }), crumbs,
        el("button", { type: "button", class: "back", id: `${pre}-back`, text: "Back one step" }));
      if (chosen.length > 1) nav.append(el("button", { type: "button", class: "restart", id: `${pre}-restart`, text: "Start again" }));
      box.append(nav);
    }
    if (p.complete) {
      const ready = el("div", { class: "ready" },
        el("p", { class: "sentence", id: `${pre}-sentence` }, el("span", { text: this.opts.readyWords || "Your order: " }),
           el("strong", { text: p.sentence || "as picked" })),
        el("p", { class: "buttons" }, el("button", { type: "button", class: "send primary", id: `${pre}-send`,
                                                     text: this.opts.sendLabel || "Send this order" })));
      box.append(ready);
    }
    if (p.ask) box.append(this.askPart(p.ask, !!p.complete));
    box.append(el("p", { class: "decision-status", role: "status", "aria-live": "polite" }));
    this.root.append(box);
    this.wire(box);
    const marked = this.showOnBoard();
    if (marked) {
      const hint = box.querySelector(".question");
      if (hint) hint.append(el("span", { class: "board-note", text: " You may also click a highlighted place on the board." }));
    }
    this.root.dataset.picks = String(this.picks.length);
    this.root.dataset.complete = p.complete ? "1" : "";
    this.root.dataset.ready = "1"; // drawn and wired (the browser tests wait for it)
    if (moved && this.root.isConnected) { // keep the keyboard where the player is: on the next question (or the send button)
      const next = box.querySelector(".send") || box.querySelector(".ask button, .ask input, .ask select");
      if (next) next.focus({ preventScroll: true });
      if (viaBoard) {
        const part = (next && next.closest(".ready, .ask")) || box;
        const still = matchMedia("(prefers-reduced-motion: reduce)").matches;
        // the whole part when the window holds it, else its beginning (the question)
        const fits = part.getBoundingClientRect().height <= innerHeight;
        part.scrollIntoView({ block: fits ? "nearest" : "start", behavior: still ? "auto" : "smooth" });
      }
    }
  }

  askPart(ask, more) {
    const qid = nextId("q");
    const part = el("div", { class: `ask ask-${ask.kind}` });
    if (more) part.append(el("p", { class: "more", text: "Or go on:" }));
    part.append(el("p", { class: "question", id: qid, text: ask.question }));
    if (ask.kind === "choose") part.append(this.choices(ask, qid));
    else if (ask.kind === "number") part.append(this.number(ask.number, qid));
    else part.append(this.sheet(ask, qid));
    return part;
  }

  choices(ask, qid) {
    const opts = ask.options || [];
    if (opts.length <= MANY) {
      const group = el("div", { class: "options", role: "group", "aria-labelledby": qid });
      opts.forEach((o, i) => {
        const b = el("button", { type: "button", class: "option", "data-i": i, title: o.hint || undefined },
          el("span", { class: "label", text: o.label }));
        if (o.hint) b.append(el("small", { text: o.hint }));
        if (o.place) b.classList.add("on-board");
        group.append(b);
      });
      return group;
    }
    const sid = nextId("sel");
    const select = el("select", { id: sid, "aria-labelledby": qid, class: "option-select" },
      el("option", { value: "", text: "Choose…" }));
    opts.forEach((o, i) => select.append(el("option", { value: i, text: o.hint ? `${o.label} (${o.hint})` : o.label })));
    return el("form", { class: "choose-many" }, select, el("button", { type: "submit", class: "ok", text: "Choose" }));
  }

  number(n, qid) {
    const iid = nextId("num");
    const start = n.default !== undefined ? n.default : n.min;
    const input = el("input", { type: "number", id: iid, min: n.min, max: n.max, step: n.step || 1, value: start,
                                inputmode: "numeric", required: true, "aria-describedby": qid });
    const form = el("form", { class: "number", novalidate: true },
      el("label", { for: iid, text: n.label }), el("span", { class: "entry" }, input, n.unit ? el("span", { class: "unit", text: n.unit }) : null),
      el("button", { type: "submit", class: "ok", text: "OK" }),
      el("small", { class: "bounds", text: bounds(n) }));
    for (const [i, o] of (n.named || []).entries()) {
      form.append(el("button", { type: "button", class: "named", "data-i": i, title: o.hint || undefined, text: o.label }));
    }
    return form;
  }

  sheet(ask, qid) {
    const form = el("form", { class: "sheet", novalidate: true, "aria-labelledby": qid });
    const grid = el("div", { class: "sheet-rows" });
    for (const n of ask.sheet) {
      const iid = nextId("cell");
      const start = n.default !== undefined ? n.default : n.min;
      const row = el("div", { class: "sheet-row", "data-key": n.key },
        el("label", { for: iid, text: n.label }),
        el("span", { class: "entry" },
           el("input", { type: "number", id: iid, min: n.min, max: n.max, step: n.step || 1, value: start,
                         inputmode: "numeric", required: true }),
           n.unit ? el("span", { class: "unit", text: n.unit }) : null),
        el("small", { class: "bounds", text: bounds(n) }));
      for (const [i, o] of (n.named || []).entries()) {
        const cid = nextId("named");
        row.append(el("label", { class: "named-check", for: cid },
          el("input", { type: "checkbox", id: cid, "data-i": i }), el("span", { text: ` ${o.label}` })));
      }
      grid.append(row);
    }
    form.append(grid, el("button", { type: "submit", class: "ok", text: "OK" }));
    return form;
  }

  wire(box) {
    const p = this.prompt;
    const ask = p.ask;
    const on = (sel, type, fn) => { for (const n of box.querySelectorAll(sel)) n.addEventListener(type, fn); };
    on(".back", "click", () => this.back());
    on(".restart", "click", () => this.restart());
    on(".send", "click", (ev) => this.send(ev.currentTarget));
    if (!ask) return;
    if (ask.kind === "choose") {
      on("button.option", "click", (ev) => this.pick(ask.options[Number(ev.currentTarget.dataset.i)].value));
      const board = this.opts.board;
      if (board) {
        const lit = (on2) => (ev) => board.light(ask.options[Number(ev.currentTarget.dataset.i)], on2);
        on("button.option.on-board", "pointerenter", lit(true));
        on("button.option.on-board", "pointerleave", lit(false));
        on("button.option.on-board", "focus", lit(true));
        on("button.option.on-board", "blur", lit(false));
      }
      on("form.choose-many", "submit", (ev) => {
        ev.preventDefault();
        const v = ev.currentTarget.querySelector("select").value;
        if (v === "") { this.say("Choose one first.", true); return; }
        this.pick(ask.options[Number(v)].value);
      });
    } else if (ask.kind === "number") {
      const n = ask.number;
      on("form.number", "submit", (ev) => {
        ev.preventDefault();
        const input = ev.currentTarget.querySelector("input");
        const v = readNumber(input.value, n);
        if (typeof v === "string") { this.say(v, true); input.focus(); return; }
        this.pick(v);
      });
      on("button.named", "click", (ev) => this.pick(n.named[Number(ev.currentTarget.dataset.i)].value));
    } else {
      const sync = (row) => {
        const named = row.querySelector(".named-check input:checked");
        row.querySelector("input[type=number]").disabled = !!named;
      };
      for (const row of box.querySelectorAll(".sheet-row")) {
        for (const c of row.querySelectorAll(".named-check input")) {
          c.addEventListener("change", () => {
            if (c.checked) for (const o of row.querySelectorAll(".named-check input")) if (o !== c) o.checked = false;
            sync(row);
          });
        }
      }
      on("form.sheet", "submit", (ev) => {
        ev.preventDefault();
        const out = {};
        for (const [i, n] of ask.sheet.entries()) {
          const row = ev.currentTarget.querySelectorAll(".sheet-row")[i];
          const named = row.querySelector(".named-check input:checked");
          if (named) { out[n.key] = n.named[Number(named.dataset.i)].value; continue; }
          const input = row.querySelector("input[type=number]");
          const v = readNumber(input.value, n);
          if (typeof v === "string") { this.say(`${n.label}: ${v}`, true); input.focus(); return; }
          out[n.key] = v;
        }
        this.pick(out);
      });
    }
  }

  async send(button) {
    if (this.busy) return;
    this.busy = true;
    if (button) button.disabled = true;
    try {
      await this.opts.send(this.prompt, this);
    } finally {
      this.busy = false;
      if (button && button.isConnected) button.disabled = false;
    }
  }
}

// Bounds in words, numbers with thousands commas as the engine writes them ("from 0 to 3,700").
const num = (v) => Number(v).toLocaleString("en-US");
function bounds(n) {
  let text = `from ${num(n.min)} to ${num(n.max)}`;
  if ((n.step || 1) !== 1) text += ` in steps of ${num(n.step)}`;
  return text;
}

// A number field's value as a pick, or what is wrong with it (a string).
function readNumber(raw, n) {
  const t = String(raw).trim();
  if (!/^-?\d+$/.test(t)) return `write a whole number ${bounds(n)}`;
  const v = Number(t);
  if (v < n.min || v > n.max || (v - n.min) % (n.step || 1) !== 0) return `write a whole number ${bounds(n)}`;
  return v;
}
