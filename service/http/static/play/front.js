// The front page's "Your games" line (`<p id="yours">`, lobby.html): shown only when this
// browser holds keys, with how many of its games wait for you, pointing to "My games".
import * as keys from "./keys.js";
import * as my from "./mygames.js";

async function draw() {
  const line = document.getElementById("yours");
  const doc = keys.load();
  if (!line || !Object.keys(doc.identities).length) return;
  const { seats, hosted } = my.remembered(doc);
  const states = await Promise.all(seats.map(([i, g, e]) => my.seatState(i, g, e)));
  const games = new Set(seats.map(([, g]) => g).concat(hosted.map(([, g]) => g)));
  // games, not seats: a game where two of your seats are asked waits for you once
  const asked = new Set(seats.filter((_, n) => states[n] && states[n].rank === 0).map(([, g]) => g)).size;
  const link = document.createElement("a");
  link.href = "/mine";
  link.textContent = "My games and keys";
  const say = asked ? `${asked} of your games ${asked === 1 ? "waits" : "wait"} for you`
    : games.size ? "no game waits for you just now" : "no game yet";
  line.replaceChildren(`Your games: ${say} — `, link);
  line.dataset.asked = String(asked);
  line.hidden = false;
}

draw();
