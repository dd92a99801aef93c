// Rollback on a game's pages (`<section id="rollback">`, game.html; issue 25). On the public
// page, when this browser holds the game's host key: the host picks an earlier step from a
// list of the steps in words (`GET /games/{id}/rollback`) and rolls the game back to it
// (`POST /games/{id}/rollback`), or withdraws a proposal that waits for the players. On a
// seat's page, when this browser holds the seat's key and the host's proposal waits for
// this seat: "The host proposes to go back to step 12 — Agree / Refuse"
// (`POST /games/{id}/rollback/consent`). Requests are signed here (a bearer token made with
// the key). It reads the proposal again whenever game.js reloads the page's part
// (`kontor:part`). Everything shown is set as text (never as markup).
import * as keys from "./keys.js";
import { el } from "./dom.js";

const page = document.getElementById("page");
const box = document.getElementById("rollback");
const gid = page ? page.dataset.game : null;
const seat = page && page.dataset.seat !== undefined ? Number(page.dataset.seat) : null;
const enc = encodeURIComponent;

let key = null; // the host's key (public page) or the seat's identity (seat page)
let busy = false;
let said = "";

async function signed(method, path, body) {
  const r = await fetch(path, { method, cache: "no-store", body: body === undefined ? undefined : JSON.stringify(body),
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${await keys.bearer(key, gid)}` } });
  const answer = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(answer.detail || answer.title || `the server answered ${r.status}`);
  return answer;
}

function status(text, bad) {
  said = text;
  const p = el("p", text, { id: "rollback-status", role: "status", "aria-live": "polite" });
  if (bad) p.classList.add("bad");
  return p;
}

async function act(method, path, body, doing) {
  if (busy) return;
  busy = true;
  for (const b of box.querySelectorAll("button")) b.disabled = true;
  said = doing;
  let answer = null;
  try {
    answer = await signed(method, path, body);
    said = answer.text || "Done.";
  } catch (e) {
    said = `Nothing changed: ${e.message}.`;
  } finally {
    busy = false;
  }
  await draw(!answer);
  document.dispatchEvent(new CustomEvent("kontor:changed")); // the page's part shows it too
}

function hostPart(info) {
  const parts = [el("h2", "Go back to an earlier step", { id: "rollback-h" })];
  const pending = info.pending;
  if (pending) {
    parts.push(el("p", pending.text, { id: "rollback-pending" }),
               el("p", `Why the players must agree: ${pending.reasons}.`));
    const withdraw = el("button", "Withdraw the proposal", { type: "button", id: "rollback-withdraw" });
    withdraw.addEventListener("click", () => act("DELETE", `/games/${enc(gid)}/rollback`, undefined,
                                                 "Withdrawing the proposal…"));
    const p = el("p", undefined, { class: "buttons" });
    p.append(withdraw);
    parts.push(p);
    return parts;
  }
  if (!info.steps.length) {
    parts.push(el("p", "There is no earlier step to go back to yet."));
    return parts;
  }
  parts.push(el("p", "The game goes back to the step as it was when it opened, and that step is asked again as a "
                + "new step. When the steps undone showed nobody anything hidden, it happens at once; otherwise "
                + "every player must agree first."));
  const form = el("form", undefined, { id: "rollback-form", class: "order" });
  form.setAttribute("aria-labelledby", "rollback-h");
  const pick = el("select", undefined, { id: "rollback-step" });
  for (const step of info.steps) pick.append(el("option", step.text, { value: String(step.phase) }));
  const row = el("div", undefined, { class: "field" });
  row.append(el("label", "Go back to", { for: "rollback-step" }), pick);
  const send = el("button", "Roll the game back", { type: "submit", id: "rollback-send" });
  const buttons = el("p", undefined, { class: "buttons" });
  buttons.append(send);
  form.append(row, buttons);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    act("POST", `/games/${enc(gid)}/rollback`, { to_phase: Number(pick.value) }, "Rolling the game back…");
  });
  parts.push(form);
  return parts;
}

function seatPart(info) {
  const pending = info.pending;
  if (!pending || !pending.needs.includes(seat)) return [];
  const parts = [el("h2", "The host wants to go back", { id: "rollback-h" }), el("p", pending.text, { id: "rollback-pending" }),
                 el("p", `Why you are asked: ${pending.reasons}.`)];
  if (pending.agreed.includes(seat)) {
    parts.push(el("p", "You agreed. The game goes back once every player has agreed."));
    return parts;
  }
  const agree = el("button", "Agree", { type: "button", id: "rollback-agree" });
  const refuse = el("button", "Refuse", { type: "button", id: "rollback-refuse" });
  agree.addEventListener("click", () => act("POST", `/games/${enc(gid)}/rollback/consent`, { agree: true },
                                            "Agreeing…"));
  refuse.addEventListener("click", () => act("POST", `/games/${enc(gid)}/rollback/consent`, { agree: false },
                                             "Refusing…"));
  const p = el("p", undefined, { class: "buttons" });
  p.append(agree, " ", refuse);
  parts.push(p);
  return parts;
}

async function draw(bad) {
  let info;
  try {
    const r = await fetch(`/games/${enc(gid)}/rollback${seat === null ? "" : "?steps=false"}`, { cache: "no-store" });
    if (!r.ok) { box.hidden = true; return; }
    info = await r.json();
    if (info.phase === null) { box.hidden = true; return; } // not running (lobby, over)
  } catch (e) {
    return; // offline for a moment: the next change tries again
  }
  const parts = seat === null ? hostPart(info) : seatPart(info);
  if (said) parts.push(status(said, bad));
  box.replaceChildren(...parts);
  box.hidden = parts.length === 0;
  box.dataset.ready = "1";
}

async function setup() {
  if (!box || !gid) return;
  const doc = keys.load();
  if (seat === null) {
    let game;
    try {
      const r = await fetch(`/games/${enc(gid)}`, { cache: "no-store" });
      if (!r.ok) return;
      game = await r.json();
    } catch (e) {
      return;
    }
    for (const ident of Object.values(doc.identities)) {
      const host = ((ident.games || {})[gid] || {}).host;
      if (host && host.jwk && host.kid === game.host_kid) key = { kid: host.kid, jwk: host.jwk, public: host.public };
    }
  } else {
    key = keys.identityFor(doc, gid, seat, page.dataset.seatKey);
  }
  if (!key) return;
  await draw();
  document.addEventListener("kontor:part", () => { if (!busy) draw(); });
}

setup();
