// The games this browser's keys play and host, and where each stands for you (for "My games
// and keys", mine.js, and the front page's line, front.js). Games are found from the key
// file only (the server lists games by status, not by key); a seat's state is read with
// that seat's own bearer token (`GET /games/{id}/phases/current`: `you.asked`, the deadline).
import * as keys from "./keys.js";

const enc = encodeURIComponent;

// Seconds as the pages say them ("1d 2h 3m"; seconds only below a minute).
export function span(secs) {
  let s = Math.floor(Math.abs(secs));
  if (s < 60) return `${s}s`;
  const parts = [];
  for (const [unit, size] of [["d", 86400], ["h", 3600], ["m", 60]]) {
    const n = Math.floor(s / size);
    s -= n * size;
    if (n) parts.push(`${n}${unit}`);
  }
  return parts.join(" ");
}

function deadlineWords(deadline) {
  if (!deadline) return "";
  const secs = (new Date(deadline).getTime() - Date.now()) / 1000;
  return secs <= 0 ? " — the deadline has passed" : ` — deadline in ${span(secs)}`;
}

export function listing(names) {
  if (names.length <= 1) return names.join("");
  return `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

export function gameName(info) {
  return `${info.title_name || "A game"}${info.name ? ` “${info.name}”` : ""}`;
}

const cache = new Map();
// The game's public record, or null when this server has no such game.
export function game(gid) {
  if (!cache.has(gid)) {
    cache.set(gid, fetch(`/games/${enc(gid)}`, { cache: "no-store" })
      .then((r) => (r.ok ? r.json() : null)).catch(() => null));
  }
  return cache.get(gid);
}

export function forget() {
  cache.clear();
}

export function playerName(info, seat) {
  const p = (info.players || []).find((x) => Number(x.seat) === Number(seat));
  return (p && p.name) || `Seat ${seat}`;
}

export function taken(info) {
  return (info.players || []).filter((p) => p.taken || p.bot).length;
}

// [ident, gid, entry] for every seat and every hosted game the key file remembers.
export function remembered(doc) {
  const seats = [];
  const hosted = [];
  const idents = Object.values(doc.identities).sort((a, b) => a.name.localeCompare(b.name));
  for (const ident of idents) {
    for (const [gid, entry] of Object.entries(ident.games || {})) {
      if (!entry || typeof entry !== "object") continue;
      if (entry.seat !== undefined && entry.seat !== null) seats.push([ident, gid, entry]);
      if (entry.host && entry.host.kid) hosted.push([ident, gid, entry]);
    }
  }
  return { seats, hosted };
}

// Where a seat this browser holds stands: {rank, text, detail, info, seat, who} (`text` the
// state in a few words, `detail` what is asked with the time left) with rank 0: asked
// of you, 1: answered or waiting for others, 2: lobby, 3: over (or the seat is no longer
// this key's), 4: the game is gone; null when the game is another server's.
export async function seatState(ident, gid, entry) {
  const info = await game(gid);
  const seat = Number(entry.seat);
  if (!info) {
    if (entry.url && entry.url !== location.origin) return null;
    return { rank: 4, text: "no longer on this server", info: null, seat, who: `seat ${seat}` };
  }
  const who = playerName(info, seat);
  const out = (rank, text, detail = "") => ({ rank, text, detail, info, seat, who });
  const holder = (info.players || []).find((p) => Number(p.seat) === seat);
  if (holder && (holder.bot || (holder.public_key && holder.public_key !== ident.public))) {
    return out(3, holder.bot ? "a bot plays this seat now" : "this seat went to another key");
  }
  if (info.status === "lobby") return out(2, `waiting for players, ${taken(info)} of ${info.seats} seats taken`);
  if (info.status === "finished") return out(3, "over: see the result");
  let ph = null;
  try {
    const r = await fetch(`/games/${enc(gid)}/phases/current`,
                          { headers: { Authorization: `Bearer ${await keys.bearer(ident, gid, 60)}` }, cache: "no-store" });
    ph = r.ok ? await r.json() : null;
  } catch (e) { ph = null; }
  if (!ph) return out(1, "cannot read what is asked just now");
  const you = ph.you || {};
  if (you.requested && !you.answered) {
    // the decision's one sentence where the title has one, else what the seat's view asks
    const asked = ((you.prompt && you.prompt.say) || you.asked || "an order").trim().replace(/\.$/, "");
    return out(0, "your turn:", `${asked}${deadlineWords(ph.deadline)}`);
  }
  const others = (ph.requested || []).filter((s) => !(ph.answered || []).includes(s) && s !== seat)
    .map((s) => playerName(info, s));
  const wait = others.length ? `waiting for ${listing(others)}` : "waiting for the next step";
  return out(1, you.requested ? `answered; ${wait}` : wait);
}

// A time stamp (ISO 8601) as the mails say it: `Sun 2027-01-05 07:36 UTC`; "" for none.
export function utcWords(iso) {
  const at = iso ? new Date(iso) : null;
  if (!at || Number.isNaN(at.getTime())) return "";
  const day = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][at.getUTCDay()];
  return `${day} ${at.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

// Where a game this browser hosts stands: {text, info}, or null when it is another server's.
export async function hostState(ident, gid, entry) {
  const info = await game(gid);
  if (!info) return null;
  let text;
  if (info.host_kid && entry.host.kid !== info.host_kid) text = "hosted with another key";
  else if (info.status === "lobby") {
    text = `waiting for players, ${taken(info)} of ${info.seats} seats taken`;
    const closes = utcWords(info.expires_at);
    if (closes) text += `; closes on ${closes}, unless you start it`;
  } else if (info.status === "finished") text = "over";
  else text = `being played, step ${(info.phase && info.phase.id) || 1}`;
  return { text, info };
}
