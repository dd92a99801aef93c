// "I'll be away" (issue 25): the seat's planned absences, set with the seat's own bearer
// token signed in this browser (`GET`/`PUT /games/{game}/seats/{seat}/absences`: the PUT
// replaces the list, so adding or removing one sends the others again). Drawn only when
// this browser holds the seat's key (game.html `<section id="away">`). Dates are days in
// UTC: "away from" is that day's midnight, "back on" the midnight the seat is back. The
// server checks every bound; its refusal is said in its words and changes nothing.
import * as keys from "./keys.js";
import { sentence } from "./contact.js";

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                "October", "November", "December"];

const path = (game, seat) => `/games/${encodeURIComponent(game)}/seats/${Number(seat)}/absences`;

// `2026-12-20T00:00:00.000+00:00` -> `20 December` (with the time when not midnight UTC).
export function day(iso) {
  const d = new Date(iso);
  const text = `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`;
  if (d.getUTCHours() === 0 && d.getUTCMinutes() === 0) return text;
  return `${text} ${String(d.getUTCHours()).padStart(2, "0")}:${String(d.getUTCMinutes()).padStart(2, "0")} UTC`;
}

async function ask(game, seat, ident, method, body) {
  let r;
  try {
    const init = { method, cache: "no-store", headers: {} };
    if (ident) init.headers.Authorization = `Bearer ${await keys.bearer(ident, game)}`;
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    r = await fetch(path(game, seat), init);
  } catch (e) {
    return { ok: false, text: "the server cannot be reached just now" };
  }
  const answer = await r.json().catch(() => ({}));
  if (r.ok) return { ok: true, absences: answer };
  return { ok: false, code: answer.code, text: answer.detail || answer.title || `the server answered ${r.status}` };
}

function policyWords(deadlines) {
  if (!deadlines) return "";
  if (deadlines.absence === "bot") {
    return "While you are away, a bot plays your decisions for you; afterwards you are told what it played.";
  }
  if (deadlines.clock === "bank") {
    return "This game runs on time banks: an absence moves no deadline, and your clock runs while you are " +
           "asked. Declare it so the others know; the host may pause the game, or let a bot play for you.";
  }
  const secs = deadlines.absence_limit_seconds || 0;
  const days = Math.round(secs / 86400);
  const hours = Math.round(secs / 3600);
  const minutes = Math.max(1, Math.round(secs / 60));
  const limit = secs >= 86400 ? `${days} day${days === 1 ? "" : "s"}`
    : secs >= 3600 ? `${hours} hour${hours === 1 ? "" : "s"}` : `${minutes} minute${minutes === 1 ? "" : "s"}`;
  return "While you are away, the game waits for you: a deadline that falls in your absence moves to its end " +
         `(by at most ${limit} per step). If it cannot wait longer, your default is played and you are told.`;
}

async function seatPage() {
  const page = document.getElementById("page");
  const box = document.getElementById("away");
  if (!page || !box || page.dataset.seat === undefined) return;
  const game = page.dataset.game;
  const seat = Number(page.dataset.seat);
  const seatKey = page.dataset.seatKey;
  const ident = keys.identityFor(keys.load(), game, seat, seatKey);
  if (!ident || (seatKey && ident.public !== seatKey)) return;
  const now = box.querySelector("#away-now");
  const list = box.querySelector("#away-list");
  const form = box.querySelector("#away-form");
  const from = box.querySelector("#away-from");
  const until = box.querySelector("#away-until");
  const err = box.querySelector("#away-e");
  const add = box.querySelector("#away-add");
  const out = box.querySelector("#away-status");
  const got = await ask(game, seat, null, "GET");
  if (!got.ok) return;
  let current = got.absences;
  try {
    const g = await fetch(`/games/${encodeURIComponent(game)}`, { cache: "no-store" }).then((r) => r.json());
    box.querySelector("#away-help").textContent = policyWords(g.deadlines);
  } catch (e) { /* the help line is a nicety */ }
  const say = (text, bad) => { out.textContent = text; out.classList.toggle("bad", !!bad); };
  let busy = false;
  const send = async (absences, done) => {
    if (busy) return;
    busy = true;
    box.setAttribute("aria-busy", "true");
    add.disabled = true;
    err.textContent = "";
    say("Saving…");
    try {
      const r = await ask(game, seat, ident, "PUT", { absences });
      if (!r.ok) {
        if (r.code === "bad_absence" || r.code === "invalid_request") err.textContent = sentence(r.text);
        say(`Not saved: ${sentence(r.text)} Nothing was changed.`, true);
        return;
      }
      current = r.absences;
      show();
      say(done);
    } finally {
      busy = false;
      box.removeAttribute("aria-busy");
      add.disabled = false;
    }
  };
  const kept = () => current.absences.map((a) => ({ from: a.from, until: a.until }));
  function show() {
    now.textContent = sentence(current.text);
    list.replaceChildren();
    current.absences.forEach((a, i) => {
      const li = document.createElement("li");
      const span = document.createElement("span");
      span.textContent = `${day(a.from)} to ${day(a.until)}`;
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = "Remove";
      b.setAttribute("aria-label", `Remove the absence ${day(a.from)} to ${day(a.until)}`);
      b.addEventListener("click", () => {
        const rest = kept().filter((_, j) => j !== i);
        send(rest, `Removed: ${day(a.from)} to ${day(a.until)}.`);
      });
      li.append(span, b);
      list.append(li);
    });
    list.hidden = current.absences.length === 0;
  }
  show();
  box.hidden = false;
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (!from.value || !until.value) {
      err.textContent = "Give both days: when you leave and when you are back.";
      (from.value ? until : from).focus();
      return;
    }
    if (until.value <= from.value) {
      err.textContent = "The day you are back must be after the day you leave.";
      until.focus();
      return;
    }
    const absence = { from: from.value, until: until.value };
    send([...kept(), absence], `Saved: away ${day(`${from.value}T00:00:00Z`)} to ${day(`${until.value}T00:00:00Z`)}.`)
      .then(() => { if (!out.classList.contains("bad")) { from.value = ""; until.value = ""; } });
  });
  box.dataset.ready = "1";
}

if (document.getElementById("away")) {
  seatPage().finally(() => { const b = document.getElementById("away"); if (b) b.dataset.done = "1"; });
}
