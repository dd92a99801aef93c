// A finished game's rematch on its page (`<section id="rematch">`, game.html; moved into
// "The game is over", main.html's `#rematch-slot`, when there is one): the link to
// the rematch once the host started it ("Rematch: <name>"), for everyone; the host's
// Rematch button when this browser holds the game's host key (`games[<game>].host` of one
// of its identities, whose kid is the game's `host_kid`).
//
// The button makes a fresh host key for the rematch (the pages' convention: one host key
// per game, as "Create a game" makes it) and asks `POST /games/{id}/rematch` with it,
// signed with this game's host key and an Idempotency-Key kept for a retry of the same
// click. The server makes the rematch once: a second click, another browser or a racing
// request gets the same game (then hosted by the key its first request gave: the fresh key
// is kept only when the rematch's `host_kid` is its own).
//
// The key file learns the rematch for this browser's identities: the host's entry
// (`games[<new>].host`), and for every identity whose public key holds a seat of the
// rematch, `games[<new>] = {url, seat}`, so opening the rematch finds its seat. Until the
// rematch exists the page asks the server again now and then (a finished game's stream is
// closed). Everything shown is set as text (never as markup).
import * as keys from "./keys.js";
import { el } from "./dom.js";

const page = document.getElementById("page");
const box = document.getElementById("rematch");
const gid = page ? page.dataset.game : null;
const pageSeat = page && page.dataset.seat !== undefined ? Number(page.dataset.seat) : null;
const enc = encodeURIComponent;
const POLL_MS = 20000;

let hostIdent = null; // the identity holding this game's host key, and that key
let hostKey = null;
let attempt = null; // {idem, fresh}: what a retry of the click sends again
let busy = false;
let timer = null;

// The box's parts (looked up in the box: it is out of the page for a moment while game.js
// draws the part it sits in again).
const part = (id) => box.querySelector(`#${id}`);

// The box sits in "The game is over" (main.html's `#rematch-slot`), once the part has it.
function place() {
  const slot = document.getElementById("rematch-slot");
  if (slot && box.parentNode !== slot) slot.append(box);
}

function say(text, bad) {
  const out = part("rematch-status");
  out.textContent = text;
  out.classList.toggle("bad", !!bad);
}

async function getJson(path) {
  const r = await fetch(path, { cache: "no-store" });
  if (!r.ok) throw new Error(`the server answered ${r.status}`);
  return r.json();
}

// The key file learns the rematch `fresh` (the new game as GET /games/{id} answers it).
function learn(old, fresh, newHost) {
  const doc = keys.load();
  let changed = false;
  for (const ident of Object.values(doc.identities)) {
    ident.games = ident.games || {};
    const mine = ident.games[old.id] || {};
    const seat = fresh.players.find((p) => p.public_key && p.public_key === ident.public);
    const entry = { ...(ident.games[fresh.id] || {}) };
    if (seat) Object.assign(entry, { url: location.origin, seat: seat.seat });
    const host = newHost && newHost.kid === fresh.host_kid && ident.name === (hostIdent && hostIdent.name) ? newHost
      : mine.host && mine.host.kid === fresh.host_kid ? mine.host : null;
    if (host) Object.assign(entry, { url: location.origin, host: { jwk: host.jwk, public: host.public, kid: host.kid } });
    if (seat || host) {
      ident.games[fresh.id] = entry;
      changed = true;
    }
  }
  if (changed) keys.save(doc);
}

// "Rematch: <name>", linking this seat's page of the rematch on a seat's page.
function show(fresh) {
  const now = part("rematch-now");
  const href = `/play/${enc(fresh.id)}${pageSeat !== null ? `/${pageSeat}` : ""}`;
  now.replaceChildren("Rematch: ", el("a", fresh.name || "the new game", { href, id: "rematch-link" }),
                      ", with the same players and a new shuffle.");
  box.dataset.rematch = fresh.id;
  part("rematch-button").hidden = true;
  if (timer) clearInterval(timer);
  timer = null;
}

async function found(old) {
  const fresh = await getJson(`/games/${enc(old.rematch.id)}`);
  learn(old, fresh, attempt && attempt.fresh);
  show(fresh);
  return fresh;
}

// Whether the page shows a finished game (main.html's `#content` says the game's status):
// until then nothing is asked of the server here.
function over() {
  const content = document.getElementById("content");
  return !box.hidden || (!!content && content.dataset.status === "finished");
}

async function check() {
  if (!over()) return;
  let game;
  try {
    game = await getJson(`/games/${enc(gid)}`);
  } catch (e) {
    return; // offline for a moment: the next look tries again
  }
  if (game.status !== "finished") return;
  place();
  box.hidden = false;
  if (game.rematch) {
    try { await found(game); } catch (e) { /* the next look tries again */ }
    return;
  }
  if (!hostKey) {
    const doc = keys.load();
    for (const ident of Object.values(doc.identities)) {
      const host = ((ident.games || {})[gid] || {}).host;
      if (host && host.jwk && host.kid === game.host_kid) {
        hostIdent = ident;
        hostKey = { kid: host.kid, jwk: host.jwk, public: host.public };
      }
    }
  }
  const button = part("rematch-button");
  if (hostKey) {
    button.hidden = false;
    button.disabled = busy;
    part("rematch-now").textContent =
      "You host this game. Start a rematch: the same players and options, a new shuffle; it begins at once, "
      + "and every player is told.";
  }
  if (!timer) timer = setInterval(check, POLL_MS);
}

async function rematch() {
  if (busy || !hostKey) return;
  busy = true;
  const button = part("rematch-button");
  button.disabled = true;
  say("Starting the rematch…");
  try {
    if (!attempt) attempt = { idem: keys.jti(), fresh: await keys.generate("host") };
    const r = await fetch(`/games/${enc(gid)}/rematch`, { method: "POST", cache: "no-store",
      body: JSON.stringify({ host_key: attempt.fresh.public }),
      headers: { "Content-Type": "application/json", "Idempotency-Key": attempt.idem,
                 Authorization: `Bearer ${await keys.bearer(hostKey, gid)}` } });
    const answer = await r.json().catch(() => ({}));
    if (!r.ok) {
      // a refusal is kept with its Idempotency-Key: the next click asks anew (with the same fresh key)
      if (r.status < 500) attempt.idem = keys.jti();
      throw new Error(answer.detail || answer.title || `the server answered ${r.status}`);
    }
    learn({ id: gid }, answer, attempt.fresh);
    show(answer);
    say(r.status === 201 ? "The rematch has started: every player is told, and you host it from its page."
      : "The rematch had been started already: here it is.");
  } catch (e) {
    say(`The rematch did not start: ${e.message}.`, true);
    button.disabled = false;
  } finally {
    busy = false;
  }
}

if (box && gid) {
  part("rematch-button").addEventListener("click", rematch);
  // the part drawn again: the box back in its place; and the game may end while the page is open
  document.addEventListener("kontor:part", () => { place(); check(); });
  place();
  check();
}
