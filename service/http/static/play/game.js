// A game's page: finds the seat's key in this browser, reads the seat's own parts with a
// self-signed bearer token, sends orders signed here (or with a mail link's capability),
// joins open games with a key made here, and follows the game live.
//
// Live follow: the SSE stream `GET /games/{id}/stream` when it answers 200
// text/event-stream (read with fetch, so the bearer goes in a header), else polling
// `GET /games/{id}/phases/current` with If-None-Match every few seconds; in the lobby
// (no step yet: that would answer 409) polling `GET /games/{id}` instead, every few
// seconds even with the stream, which has no frame for a seat taken. Either way a change
// reloads the page's <main> from `/play/...(/seat)/part`, rendered by the server, and
// tells the page's other scripts (`kontor:part` on document). A reload waits while a
// form of the part is being sent or a button pressed, so no click is lost; and while a
// form is being filled in (a half-typed name or number), but only while the new part
// asks the same: when the step moved on, or the seat was answered from elsewhere, the
// page shows the new state at once and says in its status line why (see `refresh`).
import { Board, Decision } from "./decide.js";
import * as joining from "./join.js";
import * as keys from "./keys.js";
import { zoom } from "./zoom.js";

const page = document.getElementById("page");
const game = page.dataset.game;
const seat = page.dataset.seat === undefined ? null : Number(page.dataset.seat);
const cap = page.dataset.cap ? { step: Number(page.dataset.step), cap: page.dataset.cap } : null;
const POLL_MS = 3000;
const STREAM_POLL_MS = 15000;

let doc = keys.load();
let ident = seat === null ? null : keys.identityFor(doc, game, seat, page.dataset.seatKey);

async function authHeaders() {
  return ident ? { Authorization: `Bearer ${await keys.bearer(ident, game)}` } : {};
}

function partURL() {
  let url = seat === null ? `/play/${game}/part` : `/play/${game}/${seat}/part`;
  if (!ident && cap) url += `?step=${cap.step}&cap=${encodeURIComponent(cap.cap)}`;
  return url;
}

// -- the page's parts ---------------------------------------------------------------------
// What is being picked survives a reload of the part while its step is open: the order's
// picks (by step) and the action's picks. The order's picks are kept in sessionStorage
// too (per game, seat and step), so a reload of the browser's page keeps them as well:
// asked again through the choices endpoint, they are dropped when they no longer hold,
// and so are those of another step.
let memory = { step: null, picks: [], action: [] };
let keptNote = null; // the step whose picks were kept across the browser's reload (said until picked on)
const PICKS = () => `kontor.picks.${game}.${seat}`;

function keepPicks(step, picks) {
  try {
    if (picks.length) sessionStorage.setItem(PICKS(), JSON.stringify({ step, picks }));
    else sessionStorage.removeItem(PICKS());
  } catch (e) { /* private mode: kept for this page only */ }
}

function keptPicks(step) {
  try {
    const kept = JSON.parse(sessionStorage.getItem(PICKS()) || "null");
    if (kept && kept.step === step && Array.isArray(kept.picks)) return kept.picks;
    if (kept) sessionStorage.removeItem(PICKS()); // another step's: over
  } catch (e) { /* nothing kept */ }
  return [];
}
let board = null;
let shown = null; // the part the page shows, as the server sent it
let orderD = null;
let actionD = null;

// Whether the part is in someone's hands: a decision or a join on its way, or a button
// of the part held down (its click still to come). Any reload waits for that.
function held() {
  return pressing || (orderD && orderD.busy) || (actionD && actionD.busy) || joining.busy();
}

// Something the player has put into the part and not sent: a field of the part being
// typed in (a decision's field counts once typed in: the page itself puts the focus in a
// decision's next field, and that alone never holds a reload), a join form with something
// in it, a list entry chosen or a number typed in a decision but not yet taken.
function filling(main) {
  const at = document.activeElement;
  const focused = at && main.contains(at);
  const editing = focused && at.matches("input, select, textarea") && (!at.closest(".decide") || typed.has(at));
  const join = document.getElementById("join-form");
  const joinHeld = join && (join.contains(at) || join.querySelector("#join-name").value !== ""
                            || join.querySelector("#join-email").value !== ""
                            || join.querySelector("#join-file").value !== "");
  const dirty = [...main.querySelectorAll(".decide select, .decide input")].some((f) =>
    f.tagName === "SELECT" ? f.selectedIndex !== Math.max(0, [...f.options].findIndex((o) => o.defaultSelected))
      : f.type === "checkbox" ? f.checked !== f.defaultChecked : f.value !== f.defaultValue);
  return !!(editing || joinHeld || dirty);
}

// The fields the player has typed in or changed (an input event comes from the player only).
const typed = new WeakSet();
for (const kind of ["input", "change"]) {
  document.addEventListener(kind, (ev) => { if (ev.target instanceof Element) typed.add(ev.target); }, true);
}

// What a part asks of this seat: its step and the step's state, the game's state, the
// heading of the turn (it says whether the seat has answered) and the first level of the
// decision. Two parts with the same ask differ only in what they report.
function asks(root) {
  const content = root.querySelector("#content");
  const d = content ? content.dataset : {};
  const text = (sel) => { const n = root.querySelector(sel); return n ? n.textContent.trim() : null; };
  return JSON.stringify([d.step, d.status, d.phaseStatus, text("#turn-h, #wait-h, #over-h, #join-h"),
                         !!root.querySelector("#decide"), text("#prompt-data")]);
}

// Why the page changed under the player: said at once, in words, with the new state.
// None when there is nothing to explain: the page's own order was received, or the same
// step asks a little differently (an action) and nothing typed was lost (the picks that
// still hold are kept).
function overWords(before, after, typedIn) {
  const [step, status, phase, heading, decide] = JSON.parse(before);
  const [step2, status2, phase2, heading2, decide2] = JSON.parse(after);
  if (step !== step2 || status !== status2 || phase !== phase2 || (decide && !decide2)) {
    return "This step is over (the game moved on, or your order was received from elsewhere); the page shows the new state.";
  }
  if (heading !== heading2 && /answered/.test(heading2 || "")) {
    if (sentHere === step2) return null;
    return "Your order for this step was received from elsewhere; the page shows the new state (you may still change it until the step resolves).";
  }
  if (!typedIn) return null;
  return "What this step asks has changed (the game moved on); the page shows the new state.";
}
let sentHere = null; // the step this page's own order was received for

// A pointer or key held down on the part: its click is still to come.
let pressing = false;
for (const [down, up] of [["pointerdown", "pointerup"], ["keydown", "keyup"]]) {
  document.addEventListener(down, (ev) => { if (ev.target.closest && ev.target.closest("#main")) pressing = true; }, true);
  document.addEventListener(up, () => { setTimeout(() => { pressing = false; }, 0); }, true);
}

function later() {
  clearTimeout(pending);
  pending = setTimeout(refresh, 2000);
  return false;
}

// Reload once the part is no longer being filled in (looked at here, without asking the
// server; a further change of the game reloads at once when it changes what is asked).
function whenFree() {
  clearTimeout(pending);
  pending = setTimeout(() => (filling(document.getElementById("main")) ? whenFree() : refresh()), 1000);
  return false;
}

async function refresh() {
  const main = document.getElementById("main");
  if (held()) return later(); // never pull a button from under the player's fingers
  let r;
  try {
    r = await fetch(partURL(), { headers: await authHeaders(), cache: "no-store" });
  } catch (e) {
    return false; // offline for a moment: the next change tries again
  }
  if (!r.ok) return false;
  const text = await r.text();
  if (text === shown) return false; // nothing changed (two reasons to reload, one change)
  if (held()) return later(); // taken in hand while the part was on its way
  // A field being filled in holds a reload only while the part asks the same: when the
  // step moved on (or the seat was answered from elsewhere) the page shows it at once,
  // and says so when it drops something the player had begun.
  const fresh = document.createElement("template");
  fresh.innerHTML = text; // inert: parsed, not run
  const before = asks(main);
  const after = asks(fresh.content);
  const moved = before !== after;
  if (!moved && filling(main)) return whenFree(); // never pull a field from under the player's fingers
  const typedIn = filling(main);
  // (the picks in memory: none once this page's order was received)
  const begun = moved && (typedIn || memory.picks.length > 0);
  shown = text;
  // the keyboard in the decision (on a field the page put it in): there again, on the
  // same question, when the part asks the same
  const at = document.activeElement;
  const refocus = !moved && !!at && !!at.closest && !!at.closest("#decide");
  const keep = refocus ? null : focusBefore(main);
  main.innerHTML = text; // the server's own template, every value escaped
  wire(refocus);
  // the decision draws its question again once the server answered for the picks kept:
  // meanwhile the keyboard waits on the turn's heading, never on <body>
  if (refocus && lostFocus()) headingFocus(true);
  const why = begun ? overWords(before, after, typedIn) : null;
  if (why) say(why, false, true);
  focusAfter(keep);
  document.dispatchEvent(new CustomEvent("kontor:part"));
  return true;
}

// -- the keyboard's place across a reload (WCAG 2.4.3): a reload of <main> must not drop
// the focus to <body>. Before: where the focus is (inside <main>, or already lost after
// the player acted). After: the same control when it is still there, else the heading of
// what the page now asks (the decision's: Tab goes on to its first control).
let acted = false; // the player has used this page (a key or a pointer): until then the page never moves the focus
addEventListener("keydown", () => { acted = true; }, { capture: true });
addEventListener("pointerdown", () => { acted = true; }, { capture: true });

function focusBefore(main) {
  const at = document.activeElement;
  const lost = !at || at === document.body || main.contains(at);
  if (!acted || !lost) return null;
  const content = document.getElementById("content");
  return { id: at && at !== document.body && at.id ? at.id : null, step: content ? content.dataset.step : null };
}

function focusAfter(keep) {
  if (!keep) return;
  const content = document.getElementById("content");
  const same = content && content.dataset.step === keep.step;
  const again = same && keep.id ? document.getElementById(keep.id) : null;
  const to = again && !again.disabled ? again : null;
  if (to) to.focus({ preventScroll: true });
  // not there, or not focusable yet (a place on the board before the decision lit it)
  if (!to || document.activeElement !== to) headingFocus(false);
}

function lostFocus() {
  return !document.activeElement || document.activeElement === document.body;
}

// The keyboard to the heading of what the page now asks (the decision's: Tab goes on to
// its first control).
function headingFocus(still) {
  const heading = document.querySelector("#turn-h, #over-h, #wait-h, #join-h");
  if (heading) heading.focus({ preventScroll: still });
}

// The skip link leads to what the page asks of the player (the decision) when it asks.
function skipLink() {
  const skip = document.querySelector("a.skip");
  if (!skip) return;
  const turn = document.getElementById("turn-h");
  skip.setAttribute("href", turn ? "#turn-h" : "#main");
  skip.textContent = turn ? "Skip to your turn" : "Skip to the game";
}

function data(id) {
  const node = document.getElementById(id);
  if (!node) return null;
  try { return JSON.parse(node.textContent); } catch (e) { return null; }
}

// The prompt after `picks` from the choices endpoint (`of`: "order" or "action"); an
// Error in words when refused. A step other than the page's: the page is behind.
async function choices(picks, of, step) {
  const body = { picks, of };
  const headers = { "Content-Type": "application/json" };
  if (ident) Object.assign(headers, await authHeaders());
  else if (cap) body.cap = cap.cap; // a mail link's capability, for its open step only
  let r;
  try {
    r = await fetch(`/games/${game}/seats/${seat}/choices`, { method: "POST", headers, body: JSON.stringify(body), cache: "no-store" });
  } catch (e) {
    throw new Error("The server cannot be reached just now; try again in a moment.");
  }
  const answer = await r.json().catch(() => ({}));
  if (!r.ok) {
    if (r.status === 409) changed(); // the step moved on (or the seat is no longer asked)
    throw new Error(uncited(answer.detail || answer.title || `The server answered ${r.status}.`));
  }
  if (step !== undefined && String(answer.step) !== String(step)) {
    changed();
    throw new Error("The game has moved on; the page is being brought up to date.");
  }
  return answer.prompt;
}

// `refocus`: the keyboard goes to the decision's question (it was there before a reload).
function wire(refocus = false) {
  const content = document.getElementById("content");
  const step = content ? content.dataset.step : null;
  if (memory.step !== step) {
    const kept = seat === null || !step ? [] : keptPicks(step);
    keptNote = kept.length > 0 ? step : null;
    memory = { step, picks: kept, action: [] };
  }
  zoom(document.querySelector("figure.picture")); // the zoom level carries over a refresh
  board = new Board(document.querySelector("figure.picture"));
  orderD = null;
  actionD = null;
  const decide = document.getElementById("decide");
  if (decide) {
    orderD = new Decision(decide, {
      prompt: data("prompt-data"), board, idPrefix: "order", sendLabel: "Send this order",
      ask: (picks) => choices(picks, "order", step),
      send: (prompt) => send(prompt.order, prompt.sentence),
      onBoard: () => !(actionD && actionD.picks.length),
      changed: (d) => {
        memory.picks = d.picks;
        keepPicks(step, d.picks);
        keptNote = null; // picked on: the note is old news
        // the part was reloaded while this pick was on its way: the new one takes it over
        // (with the keyboard on its next question, as the pick would have put it)
        if (d !== orderD && orderD && orderD.root.isConnected) orderD.start(d.picks, true, d.pickedOnBoard);
        programmers(d.prompt);
      },
    });
    if (orderD.first) { // else the title offers no prompt: default or JSON
      const d = orderD;
      // a step being resolved takes no more picks (asked, they would be refused)
      const open = content && content.dataset.phaseStatus === "collecting";
      d.start(open ? memory.picks : [], refocus).then(() => {
        if (!open) return;
        if (keptNote === null || keptNote !== step || d !== orderD) return;
        if (d.picks.length) {
          d.say("Your choices so far were kept.");
          programmers(d.prompt);
        } else {
          keepPicks(step, []); // they no longer hold
          memory.picks = [];
        }
      });
    }
    document.getElementById("send-default").addEventListener("click", (ev) => {
      send(JSON.parse(ev.currentTarget.dataset.default), "the default order");
    });
    document.getElementById("send-json").addEventListener("click", () => {
      let order;
      try {
        order = JSON.parse(document.getElementById("f-json").value);
        if (!order || typeof order !== "object" || Array.isArray(order)) throw new Error("an order is a JSON object");
      } catch (e) { say(`Not an order: ${e.message}`, true); return; }
      send(order, null);
    });
    decide.dataset.wired = "1"; // its buttons work from now on (the browser tests wait for it)
  }
  const act = document.getElementById("act");
  if (act && ident) {
    actionD = new Decision(act, {
      prompt: data("actions-data"), board, idPrefix: "act", sendLabel: "Do it", readyWords: "You will: ",
      ask: (picks) => choices(picks, "action"),
      send: (prompt, d) => doAction(prompt, d),
      onBoard: (d) => d.picks.length > 0,
      changed: (d) => {
        memory.action = d.picks;
        if (d !== actionD && actionD && actionD.root.isConnected) { actionD.start(d.picks, true); return; }
        if (!d.picks.length && orderD) { if (!orderD.showOnBoard()) board.clear(); }
      },
    });
    actionD.start(memory.action);
  } else if (act) {
    act.closest("aside").hidden = true; // actions are signed: only with this seat's key
  }
  if (said && step === said.step) say(said.text, said.bad, said.once);
  else said = saved(step);
  if (saidAct) sayAct(saidAct.text, saidAct.bad);
  joining.wireJoin(document.getElementById("join-form"));
  countdown();
  localTimes();
  skipLink();
}

// The programmers' JSON box follows the picks (once they make an order).
function programmers(prompt) {
  const box = document.getElementById("f-json");
  if (box && prompt && prompt.complete && prompt.order) box.value = JSON.stringify(prompt.order);
}

// What the page last said about this seat's order, and the step it was about: a reload
// of the same step (the step went on to `resolving` as the answer came, or the browser
// reloaded the page) says it again.
let said = null;
let saidAct = null;
const SAID = () => `kontor.said.${game}.${seat}`;

function saved(step) {
  try {
    const s = JSON.parse(sessionStorage.getItem(SAID()) || "null");
    if (s && s.step === step) { say(s.text, s.bad); return s; }
  } catch (e) { /* nothing kept */ }
  return null;
}

// `once`: said on this page only (not again after the browser reloads it).
function say(text, bad, once = false) {
  let out = document.getElementById("order-status");
  if (!out) { // the game is over, or this page follows no seat: a line of its own
    const turn = document.querySelector("#main section.turn");
    if (!turn || seat === null) return;
    out = document.createElement("p");
    out.id = "order-status";
    out.setAttribute("role", "status");
    out.setAttribute("aria-live", "polite");
    turn.append(out);
  }
  out.textContent = text;
  out.classList.toggle("bad", !!bad);
  const content = document.getElementById("content");
  said = { step: content ? content.dataset.step : null, text, bad: !!bad, once };
  if (!bad && !once) { try { sessionStorage.setItem(SAID(), JSON.stringify(said)); } catch (e) { /* private mode */ } }
}

function sayAct(text, bad) {
  const out = document.getElementById("action-status");
  saidAct = { text, bad: !!bad };
  if (!out) return;
  out.textContent = text;
  out.classList.toggle("bad", !!bad);
}

// The refusals that say the game is not where the page thought: the page is behind.
const MOVED_ON = ["not_your_turn", "stale_phase", "step_locked", "not_requested", "game_finished"];
// A rule cited by its id in a refusal ("(R-30)", as the engine writes it): a player reads
// no rule id outside a link (service.words.cite_rules drops what it cannot link), and the
// page cannot tell which rules its guide has an anchor for: the citation is left out.
const CITATION = /\s?\(\s*(?:(?:see|rules?)\s+)?[A-Z]{1,3}-?\d{1,3}[a-z]?(?:\s*(?:,|\/|and|to|\u2013)\s*[A-Z]{1,3}-?\d{1,3}[a-z]?)*\s*\)/g;

function uncited(text) {
  return String(text).replace(CITATION, "");
}

function refused(body, status) {
  if (MOVED_ON.includes(body.code)) {
    changed(); // the page shows the new state at once
    return "Not sent: this step no longer asks you (the game moved on, or your order was received from elsewhere); the page shows the new state.";
  }
  return `Refused: ${uncited(body.detail || body.title || `the server answered ${status}`)}`;
}

async function send(order, sentence) {
  const step = Number(document.getElementById("decide").dataset.step);
  let r;
  say("Sending…");
  try {
    if (ident) {
      const token = await keys.orderToken(ident, game, step, seat, order);
      r = await fetch(`/games/${game}/phases/${step}/orders/${seat}`, {
        method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token }) });
    } else if (cap) {
      r = await fetch(`/games/${game}/phases/${step}/orders/${seat}/by-link`, {
        method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ cap: cap.cap, order }) });
    } else {
      say("This browser has no key for this seat: import your key file on “My games and keys”.", true);
      return;
    }
  } catch (e) { say(`Not sent: ${e.message}`, true); return; }
  const body = await r.json().catch(() => ({}));
  if (r.status === 202) {
    sentHere = String(step);
    const what = sentence ? `Order received: ${sentence}.` : "Order received.";
    say(`${what}${body.step_status === "resolving" ? " Everyone has answered; the step is being resolved." : " You may change it until the step resolves."}`);
    memory.picks = [];
    keepPicks(String(step), []);
    // the keyboard goes to the turn's heading (not into a field of the next order: the
    // page does not reload under a field being edited)
    if (orderD) orderD.restart().then(() => { const h = document.getElementById("turn-h"); if (h) h.focus(); });
    setTimeout(refresh, 800);
  } else {
    say(refused(body, r.status), true);
  }
}

async function doAction(prompt, d) {
  sayAct("Sending…");
  let r;
  try {
    const token = await keys.actionToken(ident, game, seat, prompt.order);
    r = await fetch(`/games/${game}/seats/${seat}/actions`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token }) });
  } catch (e) { sayAct(`Not sent: ${e.message}`, true); return; }
  const body = await r.json().catch(() => ({}));
  if (r.ok) {
    const told = (body.events || []).map((e) => e.text).filter(Boolean);
    sayAct(told.length ? told.join(" ") : `Done: ${prompt.sentence}.`);
    memory.action = [];
    d.restart();
    setTimeout(refresh, 500);
  } else {
    sayAct(refused(body, r.status), true);
  }
}

// -- the deadline -----------------------------------------------------------------------------
function span(s) {
  if (s < 60) return `${Math.max(0, Math.floor(s))}s`;
  const parts = [];
  for (const [u, size] of [["d", 86400], ["h", 3600], ["m", 60]]) {
    const n = Math.floor(s / size);
    s -= n * size;
    if (n) parts.push(`${n}${u}`);
  }
  return parts.join(" ");
}

function localTimes() {
  for (const t of document.querySelectorAll("ol.events time[datetime]")) {
    const at = new Date(t.getAttribute("datetime"));
    if (!Number.isNaN(at.getTime())) t.textContent = at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }
}

function countdown() {
  const t = document.querySelector("[data-countdown]");
  const out = document.querySelector("[data-left]");
  if (!t || !out) return;
  const at = Date.parse(t.getAttribute("datetime"));
  t.textContent = new Date(at).toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
  const left = (at - Date.now()) / 1000;
  out.textContent = left > 0 ? span(left) : "no time";
}

// -- following the game ---------------------------------------------------------------------
let etag; // the last answer's ETag (or its status); undefined before the first answer
let pending = null;

function changed() {
  clearTimeout(pending);
  pending = setTimeout(refresh, 150); // a burst of frames: one reload
}

let polled = null; // what the last poll asked: the game (lobby) or its step

function inLobby() {
  const content = document.getElementById("content");
  return !content || content.dataset.status === "lobby";
}

async function poll() {
  const lobby = inLobby();
  const what = lobby ? `/games/${game}` : `/games/${game}/phases/current`;
  if (what !== polled) { polled = what; etag = undefined; }
  try {
    const headers = lobby ? {} : await authHeaders();
    if (etag && etag.startsWith('"')) headers["If-None-Match"] = etag;
    const r = await fetch(what, { headers, cache: "no-store" });
    if ((r.status === 401 || r.status === 403) && ident && !lobby) {
      // this key no longer holds the seat (the host gave it to a bot or another key):
      // the page goes on as everyone sees it
      ident = null;
      changed();
    }
    // 304: unchanged. Another answer counts as a state too.
    const fresh = r.status === 304 ? etag : r.status === 200 ? r.headers.get("ETag") : `status ${r.status}`;
    if (etag !== undefined && fresh !== etag) changed();
    etag = fresh;
  } catch (e) { /* offline for a moment: try again */ }
  countdown();
  // With the stream, a slow poll still shows who has answered (the stream's frames are
  // for steps and events, not for each answer); in the lobby, who has joined.
  setTimeout(poll, document.body.dataset.follow === "stream" && !inLobby() ? STREAM_POLL_MS : POLL_MS);
}

// Resolves once the person is back at the page: the tab shown again, or a key, a pointer
// or a scroll while it is shown.
function personBack() {
  const kinds = ["pointerdown", "pointermove", "keydown", "wheel", "touchstart", "focus"];
  return new Promise((ok) => {
    const back = () => {
      if (document.visibilityState !== "visible") return;
      for (const kind of kinds) window.removeEventListener(kind, back, true);
      document.removeEventListener("visibilitychange", back);
      ok();
    };
    for (const kind of kinds) window.addEventListener(kind, back, true);
    document.addEventListener("visibilitychange", back);
  });
}

// Follow the stream; `ready(true)` once it answered 200 text/event-stream, `ready(false)`
// (and no stream) when it did not. A stream the server ends says why in its last frame
// (`event: closed`): `seat_changed` (this key no longer holds the seat: the page goes on as
// everyone sees it), `idle` (nothing happened for a long time: follow again once the
// person is back; the slow poll goes on meanwhile), `token_expired` (a fresh token).
async function stream(ready) {
  let last = null;
  let answered = false;
  for (;;) {
    let closed = null;
    const headers = await authHeaders();
    if (last) headers["Last-Event-ID"] = last;
    let r;
    try { r = await fetch(`/games/${game}/stream`, { headers, cache: "no-store" }); } catch (e) { r = null; }
    if (!r || r.status !== 200 || !(r.headers.get("Content-Type") || "").startsWith("text/event-stream")) {
      if (!answered) { ready(false); return; } // no stream here: poll
      await new Promise((ok) => setTimeout(ok, 5000)); // the server is restarting: try again
      continue;
    }
    if (!answered) { answered = true; ready(true); }
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ done: true }));
      if (done) break;
      buf += value;
      let end;
      while ((end = buf.search(/\r?\n\r?\n/)) >= 0) {
        const frame = buf.slice(0, end);
        buf = buf.slice(end).replace(/^\r?\n\r?\n/, "");
        let kind = "message";
        let data = "";
        for (const line of frame.split(/\r?\n/)) {
          if (line.startsWith("event:")) kind = line.slice(6).trim();
          else if (line.startsWith("id:")) last = line.slice(3).trim();
          else if (line.startsWith("data:")) data += line.slice(5).trim();
        }
        if (kind === "game") changed();
        if (kind === "closed") {
          try { closed = JSON.parse(data).code; } catch (e) { closed = "closed"; }
        }
        if (kind === "step") {
          // The first frame of every connection is the current step: a reload only when
          // it is not the step the page shows (it changed while we were not connected).
          let step = {};
          try { step = JSON.parse(data); } catch (e) { /* not JSON: treat as a change */ }
          // (in the lobby the step is null and its status "lobby"; the page shows neither)
          const shown = document.getElementById("content").dataset;
          const phase = step.phase === null || step.phase === undefined ? "" : String(step.phase);
          const status = step.status === "lobby" ? "" : step.status;
          if (phase !== shown.step || status !== shown.phaseStatus) changed();
        }
      }
    }
    countdown();
    if (closed === "seat_changed" && ident) { ident = null; changed(); }
    if (closed === "idle") await personBack();
    await new Promise((ok) => setTimeout(ok, 1000)); // the token expired or the server restarted
  }
}

async function start() {
  document.addEventListener("kontor:changed", changed); // another script changed the game (host.js)
  wire();
  if (seat !== null && ident) {
    const note = document.getElementById("keynote");
    if (note) note.remove();
    await refresh();
  }
  setInterval(countdown, 15000);
  const streaming = await new Promise((ready) => { stream(ready); });
  document.body.dataset.follow = streaming ? "stream" : "poll";
  poll();
}

start();
