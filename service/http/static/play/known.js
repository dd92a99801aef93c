// "You in this game", at the top of every game page (`<div id="known">`, game.html): the
// seats whose keys this browser holds, each with a link to its page, and "you host this
// game" with a link to the host controls. The game's players come from `GET /games/{id}`
// (each seat's public key); a seat is this browser's when one of its identities has that
// public key, whether or not the key file remembers the game (a key imported from the
// `kontor` command's file): it is then remembered (keys.remember). The host is recognized
// by the game's own host key (`games[gid].host.kid`, equal to the game's `host_kid`).
// Everything shown is set as text (never as markup).
import * as keys from "./keys.js";
import { el } from "./dom.js";

const page = document.getElementById("page");
const box = document.getElementById("known");

// The seats of `game` this browser's keys hold, as [{seat, name, ident}], by the server's
// players; each is remembered in the key file when it was not (or under another seat).
export function heldSeats(doc, game, gid) {
  const out = [];
  const idents = Object.values(doc.identities);
  for (const p of game.players || []) {
    if (p.bot || !(p.public_key || p.kid)) continue;
    const ident = idents.find((i) => (p.public_key && i.public === p.public_key) || (p.kid && i.kid === p.kid));
    if (!ident) continue;
    const entry = (ident.games || {})[gid];
    if (!entry || entry.seat === undefined || entry.seat === null || Number(entry.seat) !== Number(p.seat)) {
      keys.remember(doc, ident, gid, p.seat);
    }
    out.push({ seat: Number(p.seat), name: p.name || `Seat ${p.seat}`, ident });
  }
  return out;
}

// The identity of this browser that hosts `game` (its host key is the game's), or null.
export function hostOf(doc, game, gid) {
  if (!game.host_kid) return null;
  return Object.values(doc.identities).find((i) => {
    const host = ((i.games || {})[gid] || {}).host;
    return host && host.kid === game.host_kid;
  }) || null;
}

// The seats the open step still waits for (asked, not answered: public knowledge).
async function waitingFor(gid, game) {
  if (game.status !== "running" || !game.phase || game.phase.status !== "collecting") return new Set();
  try {
    const r = await fetch(`/games/${encodeURIComponent(gid)}/phases/current`, { cache: "no-store" });
    if (!r.ok) return new Set();
    const ph = await r.json();
    if (ph.status !== "collecting") return new Set();
    return new Set((ph.requested || []).filter((n) => !(ph.answered || []).includes(n)).map(Number));
  } catch (e) {
    return new Set();
  }
}

async function draw() {
  if (!page || !box) return;
  const gid = page.dataset.game;
  const here = page.dataset.seat === undefined ? null : Number(page.dataset.seat);
  if (!Object.keys(keys.load().identities).length) return; // no key in this browser: nothing to say
  let game;
  try {
    const r = await fetch(`/games/${encodeURIComponent(gid)}`, { cache: "no-store" });
    if (!r.ok) return;
    game = await r.json();
  } catch (e) {
    return; // offline for a moment: the page works without this line
  }
  // read again after the wait (the page's own script may have stored a key meanwhile) and
  // remember at once, with no wait in between, so that nothing stored is overwritten
  const doc = keys.load();
  const seats = heldSeats(doc, game, gid);
  const host = hostOf(doc, game, gid);
  if (!seats.length && !host) {
    box.replaceChildren();
    box.hidden = true;
    return;
  }
  const waiting = seats.length ? await waitingFor(gid, game) : new Set();
  const list = el("ul");
  for (const s of seats) {
    const li = el("li");
    li.dataset.seat = String(s.seat);
    const turn = waiting.has(s.seat) ? ", and it is your turn" : "";
    if (s.seat === here) {
      li.append(`This is your page: you play ${s.name} (seat ${s.seat})${turn}.`);
      li.classList.add("here");
    } else {
      li.append(`You play ${s.name} (seat ${s.seat})${turn}: `,
                el("a", `open ${s.name}’s page`, { href: `/play/${encodeURIComponent(gid)}/${s.seat}` }));
    }
    if (turn) li.classList.add("yours");
    list.append(li);
  }
  if (host) {
    const li = el("li");
    li.dataset.host = "1";
    li.append("You host this game: ", el("a", "host controls", { href: `/play/${encodeURIComponent(gid)}#host` }));
    list.append(li);
  }
  const shown = box.querySelector("ul");
  if (!(shown && shown.outerHTML === list.outerHTML)) { // unchanged: keep it (and any focus in it)
    box.replaceChildren(el("h2", "You in this game", { id: "known-h" }), list);
  }
  box.hidden = false;
  box.dataset.ready = "1";
}

draw().finally(() => { if (box) box.dataset.done = "1"; });

// The game moved on (the page's script reloads <main> on every change): say it again, so
// that "it is your turn" never outlives the turn.
let again = null;
const main = document.getElementById("main");
if (main && box) {
  new MutationObserver(() => {
    clearTimeout(again);
    again = setTimeout(draw, 300);
  }).observe(main, { childList: true });
}
