// "Tell me by e-mail": the address a seat's mails go to (when it is the seat's turn, plus
// messages and the game's end), set with the seat's own bearer token signed in this
// browser (`GET`/`PUT /games/{game}/seats/{seat}/contact`; `{"email": null}` removes it).
// Used by the join form (join.js: the optional address, sent right after joining) and by a
// seat's page (game.html `<section id="contact">`, drawn only when this browser holds the
// seat's key). The server validates the address; its refusal is said in its words.
import * as keys from "./keys.js";

// A server's text as a sentence (ending with a full stop).
export function sentence(text) {
  const t = String(text).trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

const path = (game, seat) => `/games/${encodeURIComponent(game)}/seats/${Number(seat)}/contact`;

// The answer of a contact request: {ok, contact} or {ok: false, text} (in words).
async function ask(game, seat, ident, method, body) {
  let r;
  try {
    const init = { method, cache: "no-store",
                   headers: { Authorization: `Bearer ${await keys.bearer(ident, game)}` } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    r = await fetch(path(game, seat), init);
  } catch (e) {
    return { ok: false, text: "the server cannot be reached just now" };
  }
  const answer = await r.json().catch(() => ({}));
  if (r.ok) return { ok: true, contact: answer };
  return { ok: false, code: answer.code,
           text: answer.detail || answer.title || `the server answered ${r.status}` };
}

// Set (or, with null, remove) the seat's e-mail address.
export function setEmail(game, seat, ident, address) {
  return ask(game, seat, ident, "PUT", { email: address || null });
}

export function getContact(game, seat, ident) {
  return ask(game, seat, ident, "GET");
}

// What the seat's contact says about its mail, in a sentence.
export function describe(contact) {
  if (!contact.email) return "No e-mail address is set: you are not told by mail when it is your turn.";
  const to = `Mails go to ${contact.email}`;
  if (contact.email_status === "unsubscribed") {
    return `${contact.email} was unsubscribed (from a mail’s link): no mails go to it.`;
  }
  if (contact.email_status === "failed") {
    return `${to}, but the last one could not be delivered; check the address.`;
  }
  if (contact.delivery === "every") return `${to} at every step of the game.`;
  if (contact.delivery === "digest") {
    return `${to} once a day, and at once when it is your turn, a reminder is due or the game ends.`;
  }
  return `${to} when it is your turn, when a message is for you, and when the game ends.`;
}

// -- the seat's page ----------------------------------------------------------------------
function say(out, text, bad) {
  out.textContent = text;
  out.classList.toggle("bad", !!bad);
}

async function seatPage() {
  const page = document.getElementById("page");
  const box = document.getElementById("contact");
  if (!page || !box || page.dataset.seat === undefined) return;
  const game = page.dataset.game;
  const seat = Number(page.dataset.seat);
  const seatKey = page.dataset.seatKey;
  const ident = keys.identityFor(keys.load(), game, seat, seatKey);
  // not this browser's seat (or no longer: the seat has another key now): nothing to set
  if (!ident || (seatKey && ident.public !== seatKey)) return;
  const now = box.querySelector("#contact-now");
  const form = box.querySelector("#contact-form");
  const input = box.querySelector("#contact-email");
  const err = box.querySelector("#contact-email-e");
  const save = box.querySelector("#contact-save");
  const remove = box.querySelector("#contact-remove");
  const out = box.querySelector("#contact-status");
  const got = await getContact(game, seat, ident);
  if (!got.ok) return; // the key is not (or no longer) this seat's: the section stays hidden
  let current = got.contact;
  const show = () => {
    now.textContent = describe(current);
    remove.hidden = !current.email;
    save.textContent = current.email ? "Change the address" : "Tell me by e-mail";
  };
  show();
  input.value = current.email || "";
  box.hidden = false;
  let busy = false;
  const send = async (address) => {
    if (busy) return;
    busy = true;
    box.setAttribute("aria-busy", "true");
    save.disabled = remove.disabled = true;
    err.textContent = "";
    say(out, address ? "Saving your address…" : "Removing your address…");
    try {
      const r = await setEmail(game, seat, ident, address);
      if (!r.ok) {
        if (r.code === "bad_email" || r.code === "invalid_request") err.textContent = r.text;
        say(out, `Not saved: ${sentence(r.text)} Nothing was changed.`, true);
        return;
      }
      current = r.contact;
      input.value = current.email || "";
      show();
      say(out, current.email ? `Saved: your mails go to ${current.email}.` : "Removed: you get no more mails.");
    } finally {
      busy = false;
      box.removeAttribute("aria-busy");
      save.disabled = remove.disabled = false;
    }
  };
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const address = input.value.trim();
    if (!address) {
      err.textContent = "Write your e-mail address first (or remove it with the other button).";
      input.focus();
      return;
    }
    send(address);
  });
  remove.addEventListener("click", () => send(null));
  box.dataset.ready = "1";
}

if (document.getElementById("contact")) {
  seatPage().finally(() => { const b = document.getElementById("contact"); if (b) b.dataset.done = "1"; });
}
