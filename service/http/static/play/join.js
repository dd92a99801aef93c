// Joining a game in one step: a name and a key (made here, one this browser holds, or
// imported from a key file), `POST /games/{id}/seats` (with the seat an invitation names;
// an Idempotency-Key kept for a retry), the seat remembered in the key file, then the
// seat's page; an e-mail address written in the form is then given as the seat's contact
// (contact.js; refused, the join still stands and the page says so). Used by the invite links' page (join.html) and by a game's page in its
// lobby (game.js wires the same form after every reload of the page's part).
import * as keys from "./keys.js";
import { sentence, setEmail } from "./contact.js";
import { el } from "./dom.js";

// What a retry of the same join sends again (by game): the key and the Idempotency-Key.
const attempts = {};
// Whether a join is on its way (a page reload must wait for it).
let sending = false;
export const busy = () => sending;

// The seats of `game` this browser's identities remember: [{name, seat}].
function held(doc, game) {
  return Object.values(doc.identities)
    .filter((i) => i.games && i.games[game] && i.games[game].seat !== undefined && i.games[game].seat !== null)
    .map((i) => ({ name: i.name, seat: Number(i.games[game].seat) }));
}

// Wire the join form `form` (joinform.html); safe to call again on a new copy of it.
export function wireJoin(form) {
  if (!form || form.dataset.wired) return;
  const game = form.dataset.game;
  const seat = form.dataset.seat === undefined ? null : Number(form.dataset.seat);
  const out = form.querySelector("#join-status");
  const nameErr = form.querySelector("#join-name-e");
  const keyErr = form.querySelector("#join-key-e");
  const pickRow = form.querySelector("#join-held-row");
  const pick = form.querySelector("#join-held");
  const doc = keys.load();
  const names = Object.keys(doc.identities).sort();
  for (const n of names) pick.append(el("option", n, { value: n }));
  pickRow.hidden = !names.length;
  const mine = held(doc, game);
  if (mine.length) {
    const note = form.querySelector("#join-held-note");
    note.replaceChildren();
    for (const m of mine) {
      note.append(`This browser holds seat ${m.seat} of this game (key ${m.name}): `,
                  el("a", "open your seat’s page", { href: `/play/${encodeURIComponent(game)}/${m.seat}` }), ". ");
    }
    note.hidden = false;
  }
  // a choice of key follows what is touched
  pick.addEventListener("change", () => { form.querySelector("#join-key-held").checked = true; });
  form.querySelector("#join-file").addEventListener("change", () => { form.querySelector("#join-key-file").checked = true; });
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (sending) return;
    join(form, game, seat, { out, nameErr, keyErr, pick });
  });
  form.dataset.wired = "1";
  form.querySelector("#join-send").disabled = false; // disabled until now (joinform.html)
  form.dataset.ready = "1";
}

function say(out, text, bad) {
  out.textContent = text;
  out.classList.toggle("bad", !!bad);
}

// The identity to join with, by the form's choice of key; throws an Error in words.
async function identity(form, doc, display, pick) {
  const how = form.querySelector("input[name=key]:checked").value;
  if (how === "held") {
    const ident = doc.identities[pick.value];
    if (!ident) throw new Error("Choose one of the keys this browser holds.");
    return ident;
  }
  if (how === "file") {
    const file = form.querySelector("#join-file").files[0];
    if (!file) throw new Error("Choose your key file (keys.json) first.");
    let incoming;
    try { incoming = JSON.parse(await file.text()); } catch (e) { throw new Error("That file is not a key file."); }
    const before = new Set(Object.keys(doc.identities));
    try {
      await keys.importFile(doc, JSON.stringify(incoming));
    } catch (e) {
      throw new Error(`That key file cannot be used: ${e.message}.`);
    }
    const inFile = Object.keys(incoming.identities || {});
    if (inFile.length !== 1) {
      // several keys: the browser holds them all now; the person picks one
      for (const n of inFile) if (!before.has(n)) pick.append(el("option", n, { value: n }));
      form.querySelector("#join-held-row").hidden = false;
      throw new Error(`The file holds ${inFile.length} keys; they are in this browser now: choose one under `
                      + "“Use a key this browser holds”.");
    }
    return doc.identities[inFile[0]];
  }
  return keys.generate(keys.freeName(doc, display));
}

async function join(form, game, seat, parts) {
  const { out, nameErr, keyErr, pick } = parts;
  nameErr.textContent = "";
  keyErr.textContent = "";
  const display = form.querySelector("#join-name").value.trim();
  if (!display) {
    nameErr.textContent = "Your name, please: the others see it at the table.";
    form.querySelector("#join-name").focus();
    return;
  }
  sending = true;
  form.setAttribute("aria-busy", "true");
  const button = form.querySelector("#join-send");
  button.disabled = true;
  let joined = false;
  try {
    let doc = keys.load();
    const how = form.querySelector("input[name=key]:checked").value;
    const same = attempts[game] && attempts[game].display === display && attempts[game].how === how
      && (how !== "held" || attempts[game].ident.name === pick.value) && how !== "file";
    let ident;
    if (same) {
      ident = attempts[game].ident;
    } else {
      say(out, how === "new" ? "Making your key…" : "Reading your key…");
      try {
        ident = await identity(form, doc, display, pick);
      } catch (e) {
        keyErr.textContent = e.message;
        say(out, "Not joined yet: see the key.", true);
        return;
      }
      attempts[game] = { display, how, ident, idem: keys.jti() };
    }
    say(out, "Joining…");
    const body = { name: display, public_key: ident.public };
    if (seat !== null) body.seat = seat;
    let r;
    try {
      r = await fetch(`/games/${encodeURIComponent(game)}/seats`, { method: "POST", cache: "no-store",
        headers: { "Content-Type": "application/json", "Idempotency-Key": attempts[game].idem },
        body: JSON.stringify(body) });
    } catch (e) {
      say(out, "The server cannot be reached just now; press Join again to retry.", true);
      return;
    }
    const answer = await r.json().catch(() => ({}));
    if (r.status !== 201) {
      delete attempts[game];
      const text = answer.detail || answer.title || `the server answered ${r.status}`;
      const field = answer.errors && answer.errors.name ? nameErr : null;
      if (field) field.textContent = text;
      say(out, `Not joined: ${text}`, true);
      if (["seat_taken", "game_started", "game_full", "key_in_use"].includes(answer.code) || r.status === 409) {
        out.append(" ", el("a", "The game’s page", { href: `/play/${encodeURIComponent(game)}` }));
      }
      return;
    }
    doc = keys.load(); // the file may have been imported meanwhile
    const kept = doc.identities[ident.name] && doc.identities[ident.name].public === ident.public
      ? doc.identities[ident.name] : ident;
    keys.remember(doc, kept, game, answer.seat);
    const page = `/play/${encodeURIComponent(game)}/${answer.seat}`;
    const address = form.querySelector("#join-email").value.trim();
    if (address) {
      say(out, "Joined: giving your e-mail address…");
      const r = await setEmail(game, answer.seat, kept, address);
      if (!r.ok) {
        joined = true; // joined: the form must not send again
        form.querySelector("#join-email-e").textContent = sentence(r.text);
        say(out, `You have joined (seat ${answer.seat}), but your e-mail address was not saved: ${sentence(r.text)} `
                 + "You can give it on your seat’s page, under “Tell me by e-mail”: ", true);
        out.append(el("a", "open your seat’s page", { href: page }), ".");
        form.removeAttribute("aria-busy");
        return;
      }
    }
    say(out, "Joined: opening your seat’s page…");
    joined = true; // the form stays busy: the page is leaving
    location.assign(page);
  } finally {
    if (!joined) {
      sending = false;
      button.disabled = false;
      form.removeAttribute("aria-busy");
    }
  }
}

// An invitation whose seat (or game) is no longer open, opened in the browser that holds
// that seat's key (by public key, #join-seats): "This is your seat", with a link to its page.
function recognize(note) {
  const game = note.dataset.game;
  let seats = [];
  try { seats = JSON.parse(document.getElementById("join-seats").textContent) || []; } catch (e) { return; }
  const doc = keys.load();
  const idents = Object.values(doc.identities);
  const mine = [];
  for (const s of seats) {
    const ident = s.public_key && idents.find((i) => i.public === s.public_key);
    if (!ident) continue;
    const entry = (ident.games || {})[game];
    if (!entry || Number(entry.seat) !== Number(s.seat)) keys.remember(doc, ident, game, s.seat);
    mine.push(s);
  }
  if (!mine.length) return;
  note.replaceChildren();
  for (const [n, s] of mine.entries()) {
    if (n) note.append(" ");
    note.append(`This is your seat (${s.name}): `,
                el("a", mine.length === 1 ? "open your page" : `open ${s.name}’s page`,
                   { href: `/play/${encodeURIComponent(game)}/${Number(s.seat)}` }), ".");
  }
  note.dataset.yours = mine.map((s) => s.seat).join(" ");
}

const closed = document.querySelector("#join-closed[data-game]");
if (closed) recognize(closed);
const standalone = document.querySelector("#join-form[data-standalone]");
if (standalone) wireJoin(standalone);
