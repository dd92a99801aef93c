// Keys in the browser: Ed25519 key pairs made or imported here, kept in localStorage as
// the `kontor` command's key file (keys.json, version 2), and the tokens signed with them
// (WebCrypto Ed25519). The server never sees a private key: it gets public keys, signed
// order tokens and short-lived bearer tokens, exactly as from the `kontor` command.
//
// File format (service/client/keystore.py):
//   {"version": 2, "identities": {"<name>": {"jwk": {private JWK}, "public": x, "kid": ...,
//     "created_at": ..., "games": {"<game>": {"url": ..., "seat": n}}}}}

const STORE = "kontor.keys";
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/;
const enc = new TextEncoder();

export function b64url(bytes) {
  let s = "";
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function b64json(value) {
  return b64url(enc.encode(JSON.stringify(value)));
}

// RFC 7638 thumbprint of an Ed25519 public key (`kid`): SHA-256 of the required members
// in lexicographic order, without whitespace.
export async function thumbprint(x) {
  const canon = `{"crv":"Ed25519","kty":"OKP","x":"${x}"}`;
  return b64url(await crypto.subtle.digest("SHA-256", enc.encode(canon)));
}

export function load() {
  try {
    const doc = JSON.parse(localStorage.getItem(STORE) || "null");
    if (doc && doc.version === 2 && doc.identities && typeof doc.identities === "object") return doc;
  } catch (e) { /* a damaged entry: start again (the export is the user's copy) */ }
  return { version: 2, identities: {} };
}

export function save(doc) {
  localStorage.setItem(STORE, JSON.stringify(doc));
}

export async function generate(name) {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const jwk = await crypto.subtle.exportKey("jwk", pair.privateKey);
  const clean = { kty: "OKP", crv: "Ed25519", x: jwk.x, d: jwk.d };
  return { name, jwk: clean, public: jwk.x, kid: await thumbprint(jwk.x),
           created_at: new Date().toISOString().replace(/\.\d+Z$/, "+00:00"), games: {} };
}

// A free identity name made from a display name (`Anna Berg` -> `Anna_Berg`, `Anna_Berg-2`).
export function freeName(doc, display) {
  const base = String(display || "player").normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
    .replace(/[^A-Za-z0-9_.@-]+/g, "_").replace(/^[^A-Za-z0-9]+|_+$/g, "").slice(0, 50) || "player";
  let name = base, n = 2;
  while (doc.identities[name]) name = `${base}-${n++}`;
  return name;
}

async function signingKey(ident) {
  const j = ident.jwk;
  return crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x: j.x, d: j.d }, { name: "Ed25519" },
                                 false, ["sign"]);
}

export async function sign(ident, claims) {
  const head = b64json({ alg: "Ed25519", kid: ident.kid, typ: "JWT" });
  const input = `${head}.${b64json(claims)}`;
  const sig = await crypto.subtle.sign({ name: "Ed25519" }, await signingKey(ident), enc.encode(input));
  return `${input}.${b64url(sig)}`;
}

const now = () => Math.floor(Date.now() / 1000);

// A read token for `game` (claims game, iat, exp), living `ttl` seconds (the server takes at most 300).
export function bearer(ident, game, ttl = 240) {
  const t = now();
  return sign(ident, { game, iat: t, exp: t + ttl });
}

export function jti() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

export function orderToken(ident, game, phase, seat, order) {
  return sign(ident, { game, phase, seat, iat: now(), jti: jti(), order });
}

// An unprompted action's token (`POST /games/{game}/seats/{seat}/actions`): one-time by its `jti`.
export function actionToken(ident, game, seat, action) {
  return sign(ident, { game, seat, iat: now(), jti: jti(), action });
}

// The identity holding `seat` of `game`: by the seat's public key when the page knows it,
// else by what the key file remembers.
export function identityFor(doc, game, seat, publicKey) {
  const all = Object.values(doc.identities);
  return (publicKey && all.find((i) => i.public === publicKey))
    || all.find((i) => i.games && i.games[game] && Number(i.games[game].seat) === Number(seat)) || null;
}

export function remember(doc, ident, game, seat) {
  ident.games = ident.games || {};
  ident.games[game] = { ...(ident.games[game] || {}), url: location.origin, seat };
  doc.identities[ident.name] = ident;
  save(doc);
}

// Read a key file (text); every identity's key is checked to be an Ed25519 key pair whose
// public half is the one named. Returns the number of identities added or updated.
export async function importFile(doc, text) {
  const incoming = JSON.parse(text);
  if (!incoming || typeof incoming.identities !== "object") throw new Error("not a kontor key file (no identities)");
  let n = 0;
  for (const [name, raw] of Object.entries(incoming.identities)) {
    if (!NAME_RE.test(name)) throw new Error(`the name ${JSON.stringify(name)} is not a key name`);
    const jwk = raw && raw.jwk;
    if (!jwk || jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || !jwk.d || !jwk.x) {
      throw new Error(`${name}: not an Ed25519 private key`);
    }
    const key = await crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x: jwk.x, d: jwk.d },
                                              { name: "Ed25519" }, false, ["sign"]);
    // Prove the pair: sign and verify with the public half.
    const pub = await crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x: jwk.x },
                                              { name: "Ed25519" }, false, ["verify"]);
    const probe = enc.encode("kontor key check");
    if (!await crypto.subtle.verify({ name: "Ed25519" }, pub, await crypto.subtle.sign({ name: "Ed25519" }, key, probe), probe)) {
      throw new Error(`${name}: the private and public halves do not match`);
    }
    const games = {};
    for (const [g, e] of Object.entries(raw.games || {})) {
      if (e && typeof e === "object") games[g] = { ...e };
    }
    const mine = doc.identities[name];
    if (mine && mine.public !== jwk.x) throw new Error(`${name}: this browser already has another key of that name`);
    doc.identities[name] = { name, jwk: { ...jwk }, public: jwk.x, kid: await thumbprint(jwk.x),
                             created_at: raw.created_at || "", games: { ...(mine ? mine.games : {}), ...games } };
    n += 1;
  }
  save(doc);
  return n;
}

// The key file as the `kontor` command writes it (identities without the browser's `name` field).
export function exportText(doc) {
  const identities = {};
  for (const [name, i] of Object.entries(doc.identities)) {
    identities[name] = { jwk: i.jwk, public: i.public, kid: i.kid, created_at: i.created_at || "", games: i.games || {} };
  }
  return JSON.stringify({ version: 2, identities }, null, 2);
}
