// A game's page: finds the seat's key in this browser, reads the seat's own parts with a
// self-signed bearer token, sends orders signed here (or with a mail link's capability),
// joins open games with a key made here, and follows the game live.
//
// Live follow: the SSE stream `GET /games/{id}/stream` when it answers 200
// text/event-stream (read with fetch, so the bearer goes in a header), else polling
// `GET /games/{id}/phases/current` with If-None-Match every few seconds. Either way a
// change reloads the page's <main> from `/play/...(/seat)/part`, rendered by the server.
import * as keys from "./keys.js";

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
async function refresh() {
  const main = document.getElementById("main");
  const focused = document.activeElement && main.contains(document.activeElement);
  const editing = focused && document.activeElement.matches("input, select, textarea");
  if (editing) { // never pull a form from under the player's fingers: try again later
    clearTimeout(pending);
    pending = setTimeout(refresh, 2000);
    return false;
  }
  let r;
  try {
    r = await fetch(partURL(), { headers: await authHeaders(), cache: "no-store" });
  } catch (e) {
    return false; // offline for a moment: the next change tries again
  }
  if (!r.ok) return false;
  const text = await r.text();
  // A form the player has begun to fill in stays while the step is the same (the reload
  // would drop the rows they added); the next change after sending reloads it.
  const form = document.getElementById("order-form");
  if (form && form.dataset.dirty && !form.dataset.sent) {
    const next = new DOMParser().parseFromString(text, "text/html").getElementById("order-form");
    if (next && next.dataset.step === form.dataset.step) {
      clearTimeout(pending);
      pending = setTimeout(refresh, 2000);
      return false;
    }
  }
  main.innerHTML = text; // the server's own template, every value escaped
  wire();
  const content = document.getElementById("content");
  if (said && content && content.dataset.step === said.step) say(said.text, said.bad);
  else said = null;
  return true;
}

function wire() {
  const form = document.getElementById("order-form");
  if (form) {
    form.addEventListener("submit", (ev) => { ev.preventDefault(); send(form, false); });
    document.getElementById("send-default").addEventListener("click", () => send(form, true));
    wireRows(form);
    const touched = () => { form.dataset.dirty = "1"; };
    form.addEventListener("input", touched);
    form.addEventListener("change", touched);
    form.dataset.wired = "1"; // its buttons work from now on (the browser tests wait for it)
  }
  const join = document.getElementById("join-form");
  if (join) join.addEventListener("submit", (ev) => { ev.preventDefault(); joinGame(join); });
  countdown();
  localTimes();
}

function readValue(text) {
  try { return JSON.parse(text); } catch (e) { return text; }
}

// One control's value, as its `data-widget` says (see `form_fields` in play.py);
// `undefined`: left out.
function valueOf(el) {
  const v = el.value.trim();
  switch (el.dataset.widget) {
    case "check": return el.checked ? true : undefined;
    case "select": return v === "" ? undefined : JSON.parse(v);
    case "number": return v === "" ? undefined : Number(v);
    case "string": return v === "" ? undefined : v;
    default: return v === "" ? undefined : readValue(v);
  }
}

// A rows control: one item per row; an object row leaves out its empty cells, a row
// with nothing in it is left out.
function rowsOf(box) {
  const out = [];
  for (const li of box.querySelectorAll(":scope > ol > li")) {
    const cells = [...li.querySelectorAll("[data-col]")];
    if (box.hasAttribute("data-scalar")) {
      const v = valueOf(cells[0]);
      if (v !== undefined) out.push(v);
      continue;
    }
    const item = {};
    for (const c of cells) {
      const v = valueOf(c);
      if (v !== undefined) item[c.name] = v;
    }
    if (Object.keys(item).length) out.push(item);
  }
  return out;
}

function orderOf(form, useDefault) {
  if (useDefault) return JSON.parse(form.dataset.default);
  if (form.querySelector("#f-use-json").checked) {
    const order = JSON.parse(form.querySelector("#f-json").value);
    if (!order || typeof order !== "object" || Array.isArray(order)) throw new Error("an order is a JSON object");
    return order;
  }
  const order = {};
  for (const el of form.querySelectorAll("[data-field]")) {
    const v = el.dataset.widget === "rows" ? rowsOf(el) : valueOf(el);
    if (v !== undefined) order[el.getAttribute("name")] = v;
  }
  return order;
}

// "Add a row" copies the control's <template> row; "Remove" drops its row.
function wireRows(form) {
  for (const box of form.querySelectorAll("[data-widget=rows]")) {
    const list = box.querySelector(":scope > ol");
    const add = box.querySelector(":scope > .add-row");
    const max = box.dataset.max === undefined ? Infinity : Number(box.dataset.max);
    const sync = () => {
      add.disabled = list.children.length >= max;
      const empty = box.querySelector(":scope > .empty");
      if (empty) empty.hidden = list.children.length > 0;
    };
    add.addEventListener("click", () => {
      form.dataset.dirty = "1";
      list.append(box.querySelector(":scope > template").content.cloneNode(true));
      sync();
      const first = list.lastElementChild && list.lastElementChild.querySelector("[data-col]");
      if (first) first.focus();
    });
    list.addEventListener("click", (ev) => {
      const btn = ev.target.closest(".remove-row");
      if (btn) { form.dataset.dirty = "1"; btn.closest("li").remove(); sync(); add.focus(); }
    });
    sync();
  }
}

// What the page last said about this seat's order, and the step it was about: a reload
// of the same step (the step went on to `resolving` as the answer came) says it again.
let said = null;

function say(text, bad) {
  const out = document.getElementById("order-status");
  if (!out) return;
  out.textContent = text;
  out.classList.toggle("bad", !!bad);
  const content = document.getElementById("content");
  said = { step: content ? content.dataset.step : null, text, bad: !!bad };
}

async function send(form, useDefault) {
  let order;
  try { order = orderOf(form, useDefault); } catch (e) { say(`Not an order: ${e.message}`, true); return; }
  const step = Number(form.dataset.step);
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
    say(`Order received (receipt ${body.receipt}).${body.step_status === "resolving" ? " Everyone has answered; the step is being resolved." : " You may change it until the step resolves."}`);
    form.dataset.sent = "1";
    setTimeout(refresh, 800);
  } else {
    say(`Refused: ${body.detail || body.title || r.status}${body.code ? ` (${body.code})` : ""}`, true);
  }
}

// -- joining --------------------------------------------------------------------------------
async function joinGame(form) {
  const out = document.getElementById("join-status");
  const display = form.querySelector("#join-name").value.trim();
  if (!display) return;
  out.textContent = "Making your key…";
  try {
    doc = keys.load();
    const id = await keys.generate(keys.freeName(doc, display));
    const r = await fetch(`/games/${game}/seats`, {
      method: "POST", headers: { "Content-Type": "application/json", "Idempotency-Key": keys.jti() },
      body: JSON.stringify({ name: display, public_key: id.public }) });
    const body = await r.json();
    if (r.status !== 201) { out.textContent = `Refused: ${body.detail || body.title} (${body.code})`; return; }
    keys.remember(doc, id, game, body.seat);
    location.assign(`/play/${game}/${body.seat}`);
  } catch (e) {
    out.textContent = `Could not join: ${e.message}`;
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

async function poll() {
  try {
    const headers = await authHeaders();
    if (etag && etag.startsWith('"')) headers["If-None-Match"] = etag;
    const r = await fetch(`/games/${game}/phases/current`, { headers, cache: "no-store" });
    // 304: unchanged. Another answer (409 before the game starts) counts as a state too,
    // so the start of a game reloads the page.
    const fresh = r.status === 304 ? etag : r.status === 200 ? r.headers.get("ETag") : `status ${r.status}`;
    if (etag !== undefined && fresh !== etag) changed();
    etag = fresh;
  } catch (e) { /* offline for a moment: try again */ }
  countdown();
  // With the stream, a slow poll still shows who has answered (the stream's frames are
  // for steps and events, not for each answer).
  setTimeout(poll, document.body.dataset.follow === "stream" ? STREAM_POLL_MS : POLL_MS);
}

// Follow the stream; `ready(true)` once it answered 200 text/event-stream, `ready(false)`
// (and no stream) when it did not.
async function stream(ready) {
  let last = null;
  let answered = false;
  for (;;) {
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
        if (kind === "step") {
          // The first frame of every connection is the current step: a reload only when
          // it is not the step the page shows (it changed while we were not connected).
          let step = {};
          try { step = JSON.parse(data); } catch (e) { /* not JSON: treat as a change */ }
          const shown = document.getElementById("content").dataset;
          if (String(step.phase) !== shown.step || step.status !== shown.phaseStatus) changed();
        }
      }
    }
    countdown();
    await new Promise((ok) => setTimeout(ok, 1000)); // the token expired or the server restarted
  }
}

async function start() {
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
