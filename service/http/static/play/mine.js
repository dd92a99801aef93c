// "My games and keys": the identities this browser holds, their games (marking those that
// wait for them, read with each key's own bearer token), and the key file's export and
// import. Everything shown is set as text (never as markup).
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

async function gameRow(ident, gid, entry) {
  const li = el("li");
  const seat = Number(entry.seat);
  const link = el("a", `game ${gid}`, { href: `/play/${encodeURIComponent(gid)}/${seat}` });
  li.append(link, " ", el("span", `as ${ident.name}, seat ${seat}`, { class: "muted" }), " ");
  const state = el("strong", "…");
  li.append(state);
  try {
    const info = await (await fetch(`/games/${encodeURIComponent(gid)}`)).json();
    if (info.title_name) link.textContent = `${info.title_name}${info.name ? ` “${info.name}”` : ""}`;
    if (info.status === "lobby") state.textContent = "waiting for players";
    else if (info.status === "finished") state.textContent = "over";
    else {
      const r = await fetch(`/games/${encodeURIComponent(gid)}/phases/current`,
                            { headers: { Authorization: `Bearer ${await keys.bearer(ident, gid, 60)}` } });
      const ph = await r.json();
      const you = ph.you || {};
      state.textContent = you.requested && !you.answered ? "your turn" : you.requested ? "answered" : "waiting for others";
      if (you.requested && !you.answered) li.classList.add("yours");
    }
  } catch (e) {
    state.textContent = "not on this server";
  }
  return li;
}

async function draw() {
  const games = document.getElementById("games");
  const list = document.getElementById("keys");
  games.replaceChildren();
  list.replaceChildren();
  const rows = [];
  for (const ident of Object.values(doc.identities)) {
    list.append(el("li", `${ident.name} — key ${ident.kid.slice(0, 12)}…, made ${ident.created_at || "?"}`));
    for (const [gid, entry] of Object.entries(ident.games || {})) {
      if (entry.seat === undefined || entry.seat === null) continue;
      if (entry.url && entry.url !== location.origin) continue; // a game on another server
      rows.push(gameRow(ident, gid, entry));
    }
  }
  if (!list.children.length) list.append(el("li", "No key yet: joining a game makes one, or import your key file."));
  const done = await Promise.all(rows);
  done.sort((a, b) => Number(b.classList.contains("yours")) - Number(a.classList.contains("yours")));
  games.append(...done);
  document.getElementById("games-empty").hidden = done.length > 0;
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
    await draw();
  } catch (e) {
    status(`Not imported: ${e.message}`);
  }
  ev.target.value = "";
});

draw();
