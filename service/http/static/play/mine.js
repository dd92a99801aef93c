// "My games and keys": what is asked of you first (each game this browser holds a seat in,
// read with that seat's own bearer token: what it asks in the title's words and the time
// left), then the other games you play (answered, waiting for others, in the lobby, over),
// the games you host (by the game's own host key, `games[gid].host`) with a link to the
// host controls, and each key with its public key to hand to a host; the key file's export
// and import. Everything shown is set as text (never as markup).
//
// Games are found from the key file only: the server lists games by status, not by key.
import * as keys from "./keys.js";

let doc = keys.load();

function el(tag, text, attrs = {}) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

function status(text) {
  document.getElementById("keys-status").textContent = text;
}

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

function listing(names) {
  if (names.length <= 1) return names.join("");
  return `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

function gameName(info, gid) {
  if (!info || !info.title_name) return `a game on this server`;
  return `${info.title_name}${info.name ? ` “${info.name}”` : ""}`;
}

const cache = new Map();
// The game's public record, or null when this server has no such game.
function game(gid) {
  if (!cache.has(gid)) {
    cache.set(gid, fetch(`/games/${enc(gid)}`, { cache: "no-store" })
      .then((r) => (r.ok ? r.json() : null)).catch(() => null));
  }
  return cache.get(gid);
}

function playerName(info, seat) {
  const p = (info.players || []).find((x) => Number(x.seat) === Number(seat));
  return (p && p.name) || `Seat ${seat}`;
}

function taken(info) {
  return (info.players || []).filter((p) => p.taken || p.bot).length;
}

// One row of a seat this browser holds: {li, rank} (0: asked of you, 1: answered or
// waiting, 2: lobby, 3: over), or null when the game is not on this server.
async function seatRow(ident, gid, entry) {
  const info = await game(gid);
  if (!info) {
    if (entry.url && entry.url !== location.origin) return null; // a game of another server
    const li = el("li", `A game of ${ident.name} (seat ${entry.seat}) is no longer on this server.`);
    return { li, rank: 4 };
  }
  const seat = Number(entry.seat);
  const li = el("li");
  li.dataset.game = gid;
  li.dataset.seat = String(seat);
  const who = playerName(info, seat);
  const link = el("a", gameName(info, gid), { href: `/play/${enc(gid)}/${seat}` });
  const state = el("strong", "…");
  li.append(link, " ", el("span", `as ${who} (seat ${seat}, key ${ident.name}): `, { class: "muted" }), state);
  const holder = (info.players || []).find((p) => Number(p.seat) === seat);
  if (holder && holder.public_key && holder.public_key !== ident.public) {
    state.textContent = holder.bot ? "a bot plays this seat now" : "this seat went to another key";
    return { li, rank: 3 };
  }
  if (info.status === "lobby") {
    state.textContent = `waiting for players, ${taken(info)} of ${info.seats} seats taken`;
    return { li, rank: 2 };
  }
  if (info.status === "finished") {
    state.textContent = "over: see the result";
    return { li, rank: 3 };
  }
  let ph = null;
  try {
    const r = await fetch(`/games/${enc(gid)}/phases/current`,
                          { headers: { Authorization: `Bearer ${await keys.bearer(ident, gid, 60)}` }, cache: "no-store" });
    ph = r.ok ? await r.json() : null;
  } catch (e) { ph = null; }
  if (!ph) {
    state.textContent = "cannot read what is asked just now";
    return { li, rank: 1 };
  }
  const you = ph.you || {};
  if (you.requested && !you.answered) {
    const asked = you.asked || (you.prompt && you.prompt.say) || "an order";
    state.textContent = `your turn: ${asked.replace(/\.$/, "")}${deadlineWords(ph.deadline)}`;
    li.classList.add("yours");
    return { li, rank: 0 };
  }
  const others = (ph.requested || []).filter((s) => !(ph.answered || []).includes(s) && s !== seat)
    .map((s) => playerName(info, s));
  const wait = others.length ? `waiting for ${listing(others)}` : "waiting for the next step";
  state.textContent = you.requested ? `answered; ${wait}` : wait;
  return { li, rank: 1 };
}

// One row of a game this browser hosts, or null when it is not on this server.
async function hostRow(ident, gid, entry) {
  const info = await game(gid);
  if (!info) return null;
  const li = el("li");
  li.dataset.game = gid;
  li.append(el("a", gameName(info, gid), { href: `/play/${enc(gid)}` }), " ");
  let state;
  if (info.host_kid && entry.host.kid !== info.host_kid) state = "hosted with another key";
  else if (info.status === "lobby") state = `waiting for players, ${taken(info)} of ${info.seats} seats taken`;
  else if (info.status === "finished") state = "over";
  else state = `being played, step ${(info.phase && info.phase.id) || 1}`;
  li.append(el("strong", state), ": ", el("a", "host controls", { href: `/play/${enc(gid)}#host` }));
  return li;
}

function keyRow(ident) {
  const li = el("li");
  const id = `pub-${ident.kid.replace(/[^A-Za-z0-9_-]/g, "")}`;
  li.append(el("strong", ident.name), el("span", ` made ${ident.created_at ? ident.created_at.slice(0, 10) : "here"}`,
                                         { class: "muted" }));
  const line = el("div", undefined, { class: "keyline" });
  const code = el("code", ident.public, { id });
  const copy = el("button", "Copy public key", { type: "button", "aria-describedby": id });
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(ident.public);
      status(`Copied ${ident.name}’s public key: a host gives you a seat with it.`);
    } catch (e) {
      const range = document.createRange();
      range.selectNodeContents(code);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      status(`${ident.name}’s public key is selected: copy it with Ctrl+C (or ⌘C).`);
    }
  });
  line.append(el("span", "Public key:"), code, copy);
  li.append(line);
  return li;
}

async function draw() {
  const games = document.getElementById("games");
  const hosted = document.getElementById("hosted");
  const list = document.getElementById("keys");
  list.replaceChildren();
  const rows = [];
  const hosts = [];
  const idents = Object.values(doc.identities).sort((a, b) => a.name.localeCompare(b.name));
  for (const ident of idents) {
    list.append(keyRow(ident));
    for (const [gid, entry] of Object.entries(ident.games || {})) {
      if (!entry || typeof entry !== "object") continue;
      if (entry.seat !== undefined && entry.seat !== null) rows.push(seatRow(ident, gid, entry));
      if (entry.host && entry.host.kid) hosts.push(hostRow(ident, gid, entry));
    }
  }
  if (!list.children.length) list.append(el("li", "No key yet: joining a game makes one, or import your key file."));
  const done = (await Promise.all(rows)).filter(Boolean);
  done.sort((a, b) => a.rank - b.rank);
  games.replaceChildren(...done.map((r) => r.li));
  document.getElementById("games-empty").hidden = done.length > 0;
  const asked = done.filter((r) => r.rank === 0).length;
  document.getElementById("games-summary").textContent = !done.length ? ""
    : asked ? `${asked} of your games ${asked === 1 ? "waits" : "wait"} for you: first below.`
      : "No game waits for you just now.";
  const mineHosted = (await Promise.all(hosts)).filter(Boolean);
  hosted.replaceChildren(...mineHosted);
  document.getElementById("hosted-sec").hidden = mineHosted.length === 0;
  document.getElementById("main").dataset.ready = "1";
}

document.getElementById("export").addEventListener("click", () => {
  const blob = new Blob([keys.exportText(doc)], { type: "application/json" });
  const a = el("a", "", { href: URL.createObjectURL(blob), download: "keys.json" });
  document.body.append(a);
  a.click();
  a.remove();
  status("Saved keys.json: keep it private (it holds your private keys). The kontor command reads it from ~/.config/kontor/keys.json.");
});

document.getElementById("import").addEventListener("change", async (ev) => {
  const file = ev.target.files[0];
  if (!file) return;
  try {
    const n = await keys.importFile(doc, await file.text());
    doc = keys.load();
    status(`Imported ${n} key${n === 1 ? "" : "s"}.`);
    cache.clear();
    await draw();
  } catch (e) {
    status(`Not imported: ${e.message}`);
  }
  ev.target.value = "";
});

draw();
