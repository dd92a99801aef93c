// The host's controls on a game's public page (`<section id="host">`, game.html), shown
// when this browser holds the game's host key (`games[<game>].host` of one of its
// identities, whose kid is the game's `host_kid`): the invitation links (one per open seat
// and one for any open seat, each with a Copy button), who has joined, a seat handed to a
// bot or to a player's key (`PATCH /games/{id}/seats/{n}`), and Start (`PATCH
// /games/{id}` `{"status": "running"}`), enabled once every seat is taken or a bot; while
// the game runs, a seat can still be handed to a bot (for a player who is away), and the
// host's clock (issue 25): Pause / Resume (`POST /games/{id}/pause`, `/resume`) and
// "Extend the deadline by [1 day]" (`POST /games/{id}/extend`, with an Idempotency-Key). Every
// request is signed with the host key (a bearer token made here). The panel follows the
// game: game.js tells it when the page's part was reloaded (`kontor:part`); it reads
// `GET /games/{id}` again then. Everything shown is set as text (never as markup).
import * as keys from "./keys.js";
import { el } from "./dom.js";

const page = document.getElementById("page");
const box = document.getElementById("host");
const gid = page ? page.dataset.game : null;
const enc = encodeURIComponent;

let hostKey = null; // {kid, jwk, public}: the game's host key
let game = null;
let bots = [];
let busy = false;
let parts = null;

function say(text, bad) {
  parts.status.textContent = text;
  parts.status.classList.toggle("bad", !!bad);
}

function who(p) {
  // a bot's name says it is one ("Thea (greedy bot)"); else its kind is added
  if (p.bot) return p.name && p.name.includes("bot") ? p.name : `${p.name || `Seat ${p.seat}`} (a bot: ${p.bot})`;
  if (p.taken) return p.name || `Seat ${p.seat}`;
  return "open";
}

async function signed(method, path, body, extra) {
  const r = await fetch(path, { method, cache: "no-store", body: JSON.stringify(body), headers: {
    "Content-Type": "application/json", Authorization: `Bearer ${await keys.bearer(hostKey, gid)}`, ...(extra || {}) } });
  const answer = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(answer.detail || answer.title || `the server answered ${r.status}`);
  return answer;
}

async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    say(`Copied the invitation link ${what}.`);
  } catch (e) {
    say(`This browser does not let the page copy: select the link ${what} and copy it yourself.`, true);
  }
}

function invitation(label, url, what) {
  const li = el("li");
  const link = el("a", url, { href: url, class: "invite" });
  const button = el("button", "Copy", { type: "button", "aria-label": `Copy the invitation link ${what}` });
  button.addEventListener("click", () => copy(url, what));
  li.append(el("span", `${label}: `), link, " ", button);
  return li;
}

// The parts that follow the game: the invitations, the seats and Start.
function draw() {
  const lobby = game.status === "lobby";
  const open = game.players.filter((p) => !p.taken && !p.bot);
  const base = `${location.origin}/play/${enc(gid)}/join`;
  parts.invites.hidden = !lobby;
  if (lobby) {
    const list = el("ul", undefined, { class: "invites" });
    if (open.length) {
      list.append(invitation("Any open seat", base, "for any open seat"));
      for (const p of open) list.append(invitation(`Seat ${p.seat}`, `${base}/${p.seat}`, `for seat ${p.seat}`));
    }
    parts.inviteList.replaceChildren(...(open.length ? [list] : [el("p", "Every seat is taken or a bot.")]));
  }
  const rows = game.players.map((p) => {
    const tr = el("tr");
    tr.dataset.seat = String(p.seat);
    tr.append(el("td", String(p.seat)), el("td", who(p)),
              el("td", p.bot ? "plays by itself" : p.taken ? "joined" : "waiting for an invitation"));
    return tr;
  });
  parts.seats.replaceChildren(...rows);
  // the seat choice keeps what the host picked
  const before = parts.seatPick.value;
  parts.seatPick.replaceChildren(...game.players.map((p) => el("option", `Seat ${p.seat}: ${who(p)}`, { value: String(p.seat) })));
  if (before && game.players.some((p) => String(p.seat) === before)) parts.seatPick.value = before;
  // Start, or why not yet
  parts.start.hidden = !lobby;
  if (lobby) {
    parts.startButton.disabled = open.length > 0 || busy;
    parts.startWhy.textContent = open.length
      ? `${open.length === 1 ? `Seat ${open[0].seat} is` : `Seats ${open.map((p) => p.seat).join(", ")} are`} still open: `
        + "invite players or hand the seats to bots, then start."
      : "Every seat is taken or a bot: the game can start.";
  }
  parts.changeHead.textContent = lobby ? "Change a seat" : "Hand a seat to a bot (for a player who is away)";
  parts.running.hidden = lobby || game.status !== "running";
  // the clock: Pause or Resume, and the extension, while the game runs
  const running = game.status === "running" && !!game.phase;
  parts.clock.hidden = !running;
  if (running) {
    const paused = !!game.paused_since;
    parts.pause.textContent = paused ? "Resume the game" : "Pause the game";
    parts.pause.disabled = busy;
    parts.extend.disabled = busy;
    parts.clockNow.textContent = paused
      ? `Paused since ${when(game.paused_since)}: the clock is stopped. When you resume, the deadline moves on by the time paused.`
      : `The clock runs: step ${game.phase.id}'s deadline is ${when(game.phase.deadline)}.`;
  }
  box.dataset.status = game.status;
  box.dataset.paused = game.paused_since ? "1" : "";
}

function when(iso) {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? "a time to be announced" : at.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
}

// The extensions the host picks from (seconds; the server's bounds still apply).
const EXTENSIONS = [["1 hour", 3600], ["12 hours", 43200], ["1 day", 86400], ["2 days", 172800], ["1 week", 604800]];

async function clockAction(what) {
  if (busy) return;
  busy = true;
  draw();
  const paused = !!game.paused_since;
  try {
    if (what === "toggle") {
      say(paused ? "Resuming the game…" : "Pausing the game…");
      await signed("POST", `/games/${enc(gid)}/${paused ? "resume" : "pause"}`);
      say(paused ? "The game runs again; the deadline moved on by the time it was paused."
        : "The game is paused: the clock is stopped until you resume it.");
    } else {
      const seconds = Number(parts.extendBy.value);
      const label = parts.extendBy.selectedOptions[0].textContent;
      say(`Extending the deadline by ${label}…`);
      await signed("POST", `/games/${enc(gid)}/extend`, { seconds }, { "Idempotency-Key": keys.jti() });
      say(`The deadline is extended by ${label}.`);
    }
  } catch (e) {
    say(`That did not work: ${e.message}.`, true);
  } finally {
    busy = false;
  }
  await read();
  document.dispatchEvent(new CustomEvent("kontor:changed"));
}

async function read() {
  try {
    const r = await fetch(`/games/${enc(gid)}`, { cache: "no-store" });
    if (!r.ok) return;
    game = await r.json();
  } catch (e) {
    return; // offline for a moment: the next change tries again
  }
  draw();
}

// The panel's frame, made once: what follows the game is drawn into it by draw().
function frame() {
  const status = el("p", undefined, { id: "host-status", role: "status", "aria-live": "polite" });
  const invites = el("div", undefined, { id: "host-invites" });
  invites.append(el("h3", "Invite players"),
                 el("p", "Send each person a link. Whoever opens it chooses a name and joins, with a key made in "
                    + "their browser."));
  const inviteList = el("div");
  const mine = el("p");
  mine.append("To play yourself, take a seat with “",
              el("a", "join a seat", { href: `/play/${enc(gid)}/join`, id: "host-join" }),
              "”: choose your own key or make one.");
  invites.append(inviteList, mine);

  const table = el("table", undefined, { class: "players host-seats" });
  const head = el("tr");
  for (const h of ["Seat", "Player", "Now"]) head.append(el("th", h, { scope: "col" }));
  table.append(el("caption", "The seats"), el("thead"), el("tbody"));
  table.tHead.append(head);

  const form = el("form", undefined, { id: "host-seat-form", class: "order" });
  const changeHead = el("h3", "Change a seat", { id: "host-change-h" });
  form.setAttribute("aria-labelledby", "host-change-h");
  const seatPick = el("select", undefined, { id: "host-seat" });
  const to = el("select", undefined, { id: "host-to" });
  for (const kind of bots) to.append(el("option", `a bot (${kind})`, { value: `bot:${kind}` }));
  to.append(el("option", "a player’s key", { value: "key" }));
  const keyRow = el("div", undefined, { class: "field", id: "host-key-row" });
  const keyInput = el("input", undefined, { id: "host-key", autocomplete: "off", spellcheck: "false",
                                            "aria-describedby": "host-key-hint" });
  keyRow.append(el("label", "The player’s public key", { for: "host-key" }), keyInput,
                el("small", "The player finds it on “My games and keys” of their browser (or with kontor keys).",
                   { id: "host-key-hint", class: "hint" }));
  const nameRow = el("div", undefined, { class: "field", id: "host-name-row" });
  nameRow.append(el("label", "The player’s name", { for: "host-name" }),
                 el("input", undefined, { id: "host-name", maxlength: "80", autocomplete: "off" }));
  const seatRow = el("div", undefined, { class: "field" });
  seatRow.append(el("label", "Seat", { for: "host-seat" }), seatPick);
  const toRow = el("div", undefined, { class: "field" });
  toRow.append(el("label", "Give it to", { for: "host-to" }), to);
  const send = el("button", "Change the seat", { type: "submit", id: "host-seat-send" });
  const showKey = () => { keyRow.hidden = nameRow.hidden = to.value !== "key"; };
  to.addEventListener("change", showKey);
  showKey();
  form.append(changeHead, seatRow, toRow, keyRow, nameRow, el("p", undefined, { class: "buttons" }));
  form.lastChild.append(send);
  form.addEventListener("submit", (ev) => { ev.preventDefault(); change(); });

  const start = el("div", undefined, { id: "host-start" });
  const startButton = el("button", "Start the game", { type: "button", id: "host-start-button",
                                                        "aria-describedby": "host-start-why" });
  const startWhy = el("p", undefined, { id: "host-start-why" });
  startButton.addEventListener("click", begin);
  start.append(el("h3", "Start"), startWhy, el("p", undefined, { class: "buttons" }));
  start.lastChild.append(startButton);

  const running = el("p", "The game is running. A seat handed to a bot is played by the bot from its next step on; "
                     + "handed to a key, its new player plays it with that key.", { id: "host-running" });
  const clock = el("div", undefined, { id: "host-clock" });
  clock.setAttribute("role", "group");
  clock.setAttribute("aria-labelledby", "host-clock-h");
  const clockNow = el("p", undefined, { id: "host-clock-now" });
  const pause = el("button", "Pause the game", { type: "button", id: "host-pause", "aria-describedby": "host-clock-now" });
  pause.addEventListener("click", () => clockAction("toggle"));
  const extendBy = el("select", undefined, { id: "host-extend-by" });
  for (const [label, seconds] of EXTENSIONS) extendBy.append(el("option", label, { value: String(seconds) }));
  extendBy.value = "86400";
  const extend = el("button", "Extend", { type: "button", id: "host-extend" });
  extend.addEventListener("click", () => clockAction("extend"));
  const extendRow = el("p", undefined, { class: "buttons" });
  extendRow.append(el("label", "Extend the deadline by", { for: "host-extend-by" }), extendBy, extend);
  clock.append(el("h3", "The clock", { id: "host-clock-h" }), clockNow, el("p", undefined, { class: "buttons" }), extendRow);
  clock.children[2].append(pause);
  box.replaceChildren(el("h2", "You host this game", { id: "host-h" }), running, clock, invites, table, form, start, status);
  parts = { status, invites, inviteList, seats: table.tBodies[0], seatPick, to, keyInput, nameInput: nameRow.querySelector("input"),
            form, send, start, startButton, startWhy, changeHead, running, clock, clockNow, pause, extendBy, extend };
}

async function change() {
  if (busy) return;
  const seat = Number(parts.seatPick.value);
  const choice = parts.to.value;
  const current = game.players.find((p) => p.seat === seat) || {};
  let body;
  if (choice.startsWith("bot:")) {
    body = { bot: choice.slice(4) };
  } else {
    const key = parts.keyInput.value.trim();
    if (!/^[A-Za-z0-9_-]{43}$/.test(key)) {
      say("A public key is 43 letters, digits, - and _: copy it whole from the player’s “My games and keys”.", true);
      parts.keyInput.focus();
      return;
    }
    body = { public_key: key };
    const name = parts.nameInput.value.trim();
    if (name) body.name = name;
    if (current.bot) body.bot = null;
  }
  busy = true;
  parts.send.disabled = true;
  say(`Changing seat ${seat}…`);
  try {
    await signed("PATCH", `/games/${enc(gid)}/seats/${seat}`, body);
    say(choice.startsWith("bot:") ? `Seat ${seat} is played by a bot (${choice.slice(4)}) now.`
      : `Seat ${seat} is given to the key you pasted.`);
    parts.keyInput.value = "";
    parts.nameInput.value = "";
  } catch (e) {
    say(`Seat ${seat} was not changed: ${e.message}.`, true);
  } finally {
    busy = false;
    parts.send.disabled = false;
  }
  await read();
  document.dispatchEvent(new CustomEvent("kontor:changed")); // the page's part shows it too
}

async function begin() {
  if (busy) return;
  busy = true;
  parts.startButton.disabled = true;
  say("Starting the game…");
  try {
    await signed("PATCH", `/games/${enc(gid)}`, { status: "running" });
    say("The game has started.");
  } catch (e) {
    say(`The game did not start: ${e.message}.`, true);
  } finally {
    busy = false;
  }
  await read();
  document.dispatchEvent(new CustomEvent("kontor:changed"));
}

async function setup() {
  if (!box || !gid) return;
  const doc = keys.load();
  let r;
  try {
    r = await fetch(`/games/${enc(gid)}`, { cache: "no-store" });
    if (!r.ok) return;
    game = await r.json();
  } catch (e) {
    return;
  }
  for (const ident of Object.values(doc.identities)) {
    const host = ((ident.games || {})[gid] || {}).host;
    if (host && host.jwk && host.kid === game.host_kid) hostKey = { kid: host.kid, jwk: host.jwk, public: host.public };
  }
  if (!hostKey || game.status === "finished") return;
  try {
    const catalog = await (await fetch("/catalog", { cache: "no-store" })).json();
    bots = ((catalog.find((t) => t.id === game.title) || {}).bots) || [];
  } catch (e) {
    bots = [];
  }
  frame();
  draw();
  box.hidden = false;
  box.dataset.ready = "1";
  if (location.hash === "#host") box.scrollIntoView();
  document.addEventListener("kontor:part", read);
}

setup();
