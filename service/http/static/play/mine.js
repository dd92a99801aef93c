// "My games and keys": what is asked of you first (each game this browser holds a seat in,
// read with that seat's own bearer token: what it asks in the title's words and the time
// left), then the other games you play (answered, waiting for others, in the lobby, over),
// the games you host (by the game's own host key, `games[gid].host`) with a link to the
// host controls, and each key with its public key to hand to a host; the key file's export
// and import. Everything shown is set as text (never as markup).
//
// Games are found from the key file only: the server lists games by status, not by key.
import * as keys from "./keys.js";
import * as my from "./mygames.js";
import { el } from "./dom.js";

let doc = keys.load();

function status(text) {
  document.getElementById("keys-status").textContent = text;
}

const enc = encodeURIComponent;

// One row of a seat this browser holds: {li, rank} (see mygames.seatState), or null.
async function seatRow(ident, gid, entry) {
  const st = await my.seatState(ident, gid, entry);
  if (!st) return null;
  const li = el("li");
  li.dataset.game = gid;
  li.dataset.seat = String(st.seat);
  if (!st.info) {
    li.append(`A game of ${ident.name} (seat ${st.seat}): `, el("strong", st.text));
    return { li, rank: st.rank };
  }
  li.append(el("a", my.gameName(st.info), { href: `/play/${enc(gid)}/${st.seat}` }), " ",
            el("span", `as ${st.who} (seat ${st.seat}, key ${ident.name}): `, { class: "muted" }),
            el("strong", st.text));
  if (st.detail) li.append(" ", el("span", st.detail, { class: "asked" }));
  if (st.rank === 0) li.classList.add("yours");
  return { li, rank: st.rank };
}

// One row of a game this browser hosts, or null when it is not on this server.
async function hostRow(ident, gid, entry) {
  const st = await my.hostState(ident, gid, entry);
  if (!st) return null;
  const li = el("li");
  li.dataset.game = gid;
  li.append(el("a", my.gameName(st.info), { href: `/play/${enc(gid)}` }), " ", el("strong", st.text), ": ",
            el("a", "host controls", { href: `/play/${enc(gid)}#host` }));
  return li;
}

function keyRow(ident) {
  const li = el("li");
  const id = `pub-${ident.kid.replace(/[^A-Za-z0-9_-]/g, "")}`;
  li.append(el("strong", ident.name));
  if (ident.created_at) li.append(el("span", ` made ${ident.created_at.slice(0, 10)}`, { class: "muted" }));
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
  const { seats, hosted: hosts } = my.remembered(doc);
  for (const ident of Object.values(doc.identities).sort((a, b) => a.name.localeCompare(b.name))) {
    list.append(keyRow(ident));
  }
  const rows = seats.map(([ident, gid, entry]) => seatRow(ident, gid, entry));
  const hostRows = hosts.map(([ident, gid, entry]) => hostRow(ident, gid, entry));
  if (!list.children.length) list.append(el("li", "No key yet: joining a game makes one, or import your key file."));
  const done = (await Promise.all(rows)).filter(Boolean);
  done.sort((a, b) => a.rank - b.rank);
  games.replaceChildren(...done.map((r) => r.li));
  document.getElementById("games-empty").hidden = done.length > 0;
  const asked = done.filter((r) => r.rank === 0).length;
  document.getElementById("games-summary").textContent = !done.length ? ""
    : asked ? `${asked} of your games ${asked === 1 ? "waits" : "wait"} for you: first below.`
      : "No game waits for you just now.";
  const mineHosted = (await Promise.all(hostRows)).filter(Boolean);
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
    my.forget();
    await draw();
  } catch (e) {
    status(`Not imported: ${e.message}`);
  }
  ev.target.value = "";
});

draw();
