// "Create a game" (`/new`): the form in words, the host's key made in this browser, the
// game created (`POST /games`, with an Idempotency-Key kept for a retry), the chosen seats
// handed to bots (`PATCH /games/{id}/seats/{n}` signed with the host key), then the game's
// page with the host controls (host.js).
//
// The host key is a fresh key for this game alone (the server refuses the host's key as a
// seat key): it is kept in the key file under the host's identity as
// `games[<game>].host = {jwk, public, kid}`, as the `kontor` command keeps it, so the
// exported file hosts the game from the command line too.
import * as keys from "./keys.js";
import { el } from "./dom.js";

const form = document.getElementById("new-form");
const title = document.getElementById("f-title");
const seats = document.getElementById("f-seats");
const rows = document.getElementById("seat-rows");
const status = document.getElementById("new-status");
const button = document.getElementById("create");
const pick = document.getElementById("f-host");

// What a retry must send again: the same host key and Idempotency-Key for the same form.
let attempt = null;
let busy = false;

function chosen() {
  return title.selectedOptions[0];
}

function bounds() {
  const o = chosen();
  return { min: Number(o.dataset.min), max: Number(o.dataset.max) };
}

// The seat rows: one per seat, "a player (invited)" or a bot of the title's kinds.
function drawSeats() {
  const kinds = (chosen().dataset.bots || "").split(" ").filter(Boolean);
  const { min, max } = bounds();
  const n = Math.min(Math.max(Number(seats.value) || min, min), max);
  const before = [...rows.querySelectorAll("select")].map((s) => s.value);
  rows.replaceChildren();
  for (let i = 0; i < n; i += 1) {
    const row = el("div", undefined, { class: "field" });
    const id = `f-seat-${i}`;
    const select = el("select", undefined, { id, "data-seat": String(i) });
    select.append(el("option", "a player, invited with a link", { value: "" }));
    for (const kind of kinds) select.append(el("option", `a bot (${kind})`, { value: kind }));
    if (before[i] && kinds.includes(before[i])) select.value = before[i];
    row.append(el("label", `Seat ${i}`, { for: id }), select);
    rows.append(row);
  }
}

function drawTitle() {
  const id = title.value;
  for (const box of document.querySelectorAll("fieldset.variants")) box.hidden = box.dataset.title !== id;
  const { min, max } = bounds();
  seats.min = String(min);
  seats.max = String(max);
  if (Number(seats.value) < min) seats.value = String(min);
  if (Number(seats.value) > max) seats.value = String(max);
  document.getElementById("seats-hint").textContent = `${min} to ${max} players, bots included.`;
  drawSeats();
}

function drawHosts() {
  const doc = keys.load();
  const names = Object.keys(doc.identities).sort();
  for (const name of names) pick.append(el("option", name, { value: name }));
  document.getElementById("host-pick").hidden = !names.length;
  if (names.length) pick.value = names[0];
  pick.addEventListener("change", () => { document.getElementById("host-new").hidden = !!pick.value; });
  document.getElementById("host-new").hidden = !!pick.value;
}

function fieldError(id, text) {
  const out = document.getElementById(id);
  if (out) out.textContent = text || "";
}

function clearErrors() {
  for (const e of form.querySelectorAll(".error")) e.textContent = "";
  status.classList.remove("bad");
}

function say(text, bad) {
  status.textContent = text;
  status.classList.toggle("bad", !!bad);
}

// The form as the body of `POST /games` (less the host key), or null with the fields' errors shown.
function body() {
  const { min, max } = bounds();
  const n = Number(seats.value);
  let ok = true;
  if (!Number.isInteger(n) || n < min || n > max) {
    fieldError("e-seats", `${chosen().dataset.name} is played by ${min} to ${max} players.`);
    ok = false;
  }
  const options = {};
  const box = document.querySelector(`fieldset.variants[data-title="${title.value}"]`);
  for (const input of box.querySelectorAll("[data-option]")) {
    if (input.type === "checkbox") options[input.dataset.option] = input.checked;
    else if (input.type === "number") {
      if (input.value.trim() === "") continue; // the rules' default
      const v = Number(input.value);
      if (!Number.isInteger(v)) {
        fieldError(`e-options-${title.value}`, "A number of the variants is not a whole number.");
        ok = false;
      }
      options[input.dataset.option] = v;
    } else options[input.dataset.option] = input.value;
  }
  const name = document.getElementById("f-name").value.trim();
  const out = {
    title: title.value, seats: n, options,
    deadlines: {
      sealed_seconds: Number(document.getElementById("f-sealed").value),
      sequential_seconds: Number(document.getElementById("f-sequential").value),
      on_expiry: form.querySelector("input[name=expiry]:checked").value,
      absence: form.querySelector("input[name=absence]:checked").value,
      absence_limit_seconds: Number(document.getElementById("f-absence-limit").value),
    },
  };
  if (form.querySelector("input[name=clock]:checked").value === "bank") {
    const start = Number(document.getElementById("f-bank-start").value);
    const cap = Number(document.getElementById("f-bank-cap").value);
    if (cap < start) {
      fieldError("e-deadlines", "A clock cannot hold less than it starts with: choose a larger most or a smaller start.");
      ok = false;
    }
    // A time bank has no second wait: out of time, the default order is played.
    Object.assign(out.deadlines, { clock: "bank", on_expiry: "defaults", bank_start_seconds: start,
                                   bank_add_seconds: Number(document.getElementById("f-bank-add").value),
                                   bank_cap_seconds: cap });
  }
  out.mail_orders = form.querySelector("input[name=mail_orders]:checked").value;
  out.press = form.querySelector("input[name=press]:checked").value;
  out.deadlines.extension_seconds = Math.max(out.deadlines.sealed_seconds, out.deadlines.sequential_seconds);
  if (name) out.name = name;
  if (!pick.value && !document.getElementById("f-host-name").value.trim()) {
    fieldError("e-host", "Your name, please: the host’s key is kept under it.");
    ok = false;
  }
  const bots = [...rows.querySelectorAll("select")].map((s) => [Number(s.dataset.seat), s.value]).filter(([, k]) => k);
  if (ok && bots.length >= n) {
    fieldError("e-seats", "At least one seat must be a player’s.");
    ok = false;
  }
  return ok ? { body: out, bots } : null;
}

// A refusal in words, next to the field it is about where the server names one.
function refused(answer, status) {
  const text = answer.detail || answer.title || `The server answered ${status}.`;
  const errors = answer.errors && typeof answer.errors === "object" ? answer.errors : {};
  const where = { title: "e-title", seats: "e-seats", name: "e-name", deadlines: "e-deadlines",
                  options: `e-options-${title.value}` };
  let placed = false;
  for (const [field, id] of Object.entries(where)) {
    if (field in errors) { fieldError(id, text); placed = true; }
  }
  if (!placed && answer.code === "bad_options") { fieldError(`e-options-${title.value}`, text); placed = true; }
  say(placed ? "The game was not created: see the marked field." : `The game was not created: ${text}`, true);
}

async function send(plan) {
  const doc = keys.load();
  const key = JSON.stringify(plan.body);
  if (!attempt || attempt.key !== key || attempt.host !== (pick.value || document.getElementById("f-host-name").value.trim())) {
    const hostKey = await keys.generate("host");
    attempt = { key, host: pick.value || document.getElementById("f-host-name").value.trim(),
                idem: keys.jti(), hostKey, game: null };
  }
  const hostKey = attempt.hostKey;
  let gid = attempt.game;
  if (!gid) {
    say("Creating the game…");
    let r;
    try {
      r = await fetch("/games", { method: "POST", cache: "no-store",
        headers: { "Content-Type": "application/json", "Idempotency-Key": attempt.idem },
        body: JSON.stringify({ ...plan.body, host_key: hostKey.public }) });
    } catch (e) {
      say("The server cannot be reached just now; press the button again to retry.", true);
      return;
    }
    const answer = await r.json().catch(() => ({}));
    if (r.status !== 201) { refused(answer, r.status); return; }
    gid = answer.id;
    attempt.game = gid;
    // the host key, under the host's identity (made now from the name when new)
    let ident = pick.value ? doc.identities[pick.value] : null;
    if (!ident) ident = await keys.generate(keys.freeName(doc, attempt.host));
    ident.games = ident.games || {};
    ident.games[gid] = { ...(ident.games[gid] || {}), url: location.origin,
                         host: { jwk: hostKey.jwk, public: hostKey.public, kid: hostKey.kid } };
    doc.identities[ident.name] = ident;
    keys.save(doc);
  }
  const failed = [];
  for (const [seat, kind] of plan.bots) {
    say(`Seating a bot in seat ${seat}…`);
    try {
      const r = await fetch(`/games/${encodeURIComponent(gid)}/seats/${seat}`, { method: "PATCH", cache: "no-store",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${await keys.bearer(hostKey, gid)}` },
        body: JSON.stringify({ bot: kind }) });
      if (!r.ok) {
        const answer = await r.json().catch(() => ({}));
        failed.push(`seat ${seat}: ${answer.detail || answer.title || r.status}`);
      }
    } catch (e) {
      failed.push(`seat ${seat}: the server cannot be reached`);
    }
  }
  if (failed.length) {
    // the game exists: its page's host controls hand the seats to bots too
    say(`The game is made, but not every bot is seated (${failed.join("; ")}). `
        + "Open the game’s page to hand those seats to bots there.", true);
    status.append(" ", el("a", "The game’s page", { href: `/play/${encodeURIComponent(gid)}#host` }));
    return;
  }
  say("Done: opening the game’s page…");
  location.assign(`/play/${encodeURIComponent(gid)}#host`);
}

form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  if (busy) return;
  clearErrors();
  const plan = body();
  if (!plan) { say("Please correct the marked fields.", true); return; }
  busy = true;
  button.disabled = true;
  form.setAttribute("aria-busy", "true");
  try {
    await send(plan);
  } catch (e) {
    say(`The game was not created: ${e.message}`, true);
  } finally {
    busy = false;
    button.disabled = false;
    form.removeAttribute("aria-busy");
  }
});
// a field's refusal goes once the field is changed
form.addEventListener("input", (ev) => {
  const field = ev.target.closest(".field, fieldset");
  if (field) for (const e of field.querySelectorAll(".error")) e.textContent = "";
  if (status.classList.contains("bad") && !busy) say("", false);
});
title.addEventListener("change", drawTitle);
seats.addEventListener("input", drawSeats);
drawHosts();
drawTitle();
button.disabled = false; // disabled until the form is wired: a click before would reload the page
form.dataset.ready = "1";
