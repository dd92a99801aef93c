"""Request and response schemas of the API (marshmallow; they also make the OpenAPI)."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from marshmallow import EXCLUDE
from marshmallow import fields as f
from marshmallow import validate as v

from service.config import Settings
from service.core.choices import MAX_PICKS, MAX_WORDS
from service.http.api import Schema
from service.http.schemas.fields import QUERY_INT_MAX, Bool, Int, QueryFloat, QueryInt

KEY_HELP = "An Ed25519 public key: the 43 base64url characters of its 32 raw bytes (the JWK `x`)."


#: The bounds of a step's length a default server takes (`Settings.min_step_seconds`,
#: `max_step_seconds`), documented so that a client knows them before it is refused.
STEP_BOUNDS = {"minimum": Settings.min_step_seconds, "maximum": Settings.max_step_seconds}
#: The bounds of a time bank's start and cap (`Settings.bank_min_seconds`, `bank_max_seconds`).
BANK_BOUNDS = {"minimum": Settings.bank_min_seconds, "maximum": Settings.bank_max_seconds}


class PolicySchema(Schema):
    sealed_seconds = Int(load_default=86400, metadata={
        "description": "Length of a sealed (simultaneous) step, 10 seconds up to 8 weeks.", **STEP_BOUNDS})
    sequential_seconds = Int(load_default=86400, metadata={
        "description": "Length of a step that asks one seat.", **STEP_BOUNDS})
    on_expiry = f.String(load_default="defaults", validate=v.OneOf(["defaults", "extend"]), metadata={
        "description": "At the deadline: `defaults` submits the engine's default order for every seat that "
                       "did not answer; `extend` grants one extension first."})
    extension_seconds = Int(load_default=86400, metadata={"description": "Length of the one extension.",
                                                          **STEP_BOUNDS})
    # -- time bank (issue 25) ---------------------------------------------------------------
    clock = f.String(load_default="fixed", metadata={
        "enum": ["fixed", "bank"],
        "description": "`fixed` (the default): every step runs the length above. `bank`: a chess clock; each "
                       "seat has a time bank that runs only while the seat is asked and has not answered "
                       "(never while the game is paused); the step waits for each seat until its own bank "
                       "runs out. Not with `on_expiry: extend`. Anything else: 400 `bad_deadline_policy`."})
    bank_start_seconds = Int(load_default=3 * 86400, metadata={
        "description": "Each seat's bank at the start.", **BANK_BOUNDS})
    bank_add_seconds = Int(load_default=4 * 3600, metadata={
        "description": "Added to a seat's bank for each decision it makes (0 allowed), up to the cap.",
        "minimum": 0, "maximum": Settings.bank_max_seconds})
    bank_cap_seconds = Int(load_default=3 * 86400, metadata={
        "description": "The most a bank holds; at least `bank_start_seconds`.", **BANK_BOUNDS})
    bank_out = f.String(load_default="defaults", metadata={
        "enum": ["defaults", "bot"],
        "description": "A seat out of time: `defaults` plays the engine's default order for it, `bot` the "
                       "order of the bot `bank_bot`; the step then waits on for the others."})
    bank_bot = f.String(load_default=None, allow_none=True, metadata={
        "description": "A bot kind of the title (see /catalog) for `bank_out: bot`; default its first."})
    # -- absences (issue 25) -------------------------------------------------------------
    absence = f.String(load_default="extend", validate=v.OneOf(["extend", "bot"]), metadata={
        "description": "When a seat asked is away (it declared an absence): `extend` moves a deadline that falls "
                       "in the absence to its end plus the step's length (at most `absence_limit_seconds` in all "
                       "per step); `bot` lets a bot of kind `absence_bot` play the away seat's decisions."})
    absence_limit_seconds = Int(load_default=7 * 86400, metadata={
        "description": "The most absences may extend one step's deadline in all (`extend` mode).", **STEP_BOUNDS})
    absence_bot = f.String(load_default=None, allow_none=True, metadata={
        "description": "The bot kind (see /catalog) that plays an away seat in `bot` mode; none given: the "
                       "title's first."})


class CreateGameSchema(Schema):
    title = f.String(required=True, metadata={"description": "A title id from /catalog, e.g. `haendler`."})
    seats = Int(required=True, metadata={"description": "How many seats (see the title's range)."})
    options = f.Dict(keys=f.String(), load_default=dict, metadata={"description": "Title options (see /catalog)."})
    deadlines = f.Nested(PolicySchema, load_default=lambda: PolicySchema().load({}))
    seed = f.Raw(load_default=None, metadata={
        "type": ["integer", "string"], "example": 7,
        "description": "Optional seed (integer or text), for tests and reproducible games; a game created with "
                       "a known seed is not secret. Without one (or null) the server draws 32 bytes from the "
                       "operating system's cryptographic generator. The seed is shown to nobody until the game "
                       "is over (then in its history); its SHA-256 commitment is public from the start."})
    host_key = f.String(required=True, metadata={"description": "The host's public key. " + KEY_HELP})
    name = f.String(load_default=None, validate=v.Length(1, 80))
    mail_orders = f.String(load_default="reply_address", validate=v.OneOf(["signed", "reply_address"]), metadata={
        "description": "Orders by email. `reply_address` (the default): a seat with an e-mail contact answers a "
                       "mail by replying to it: the reply goes to the seat's secret per-step reply address and "
                       "its order is taken without a signature, in plain words (`bid 300`, `pass`, `default`), "
                       "as KEY=VALUE lines or as JSON; the mail also links the seat's page with a capability "
                       "for that one step. `signed`: a mailed order needs a token signed with the seat's key "
                       "(`kontor order --print-token`)."})
    press = f.String(load_default="all", validate=v.OneOf(["all", "public", "none"]), metadata={
        "description": "In-game messages: `all` (public and private), `public` (public only), `none`."})

    @ma.validates("seed")
    def _seed(self, value: object, **_: object) -> None:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | str)):
            raise ma.ValidationError("seed is an integer or a text")


class AbsenceOutSchema(Schema):
    from_ = f.String(data_key="from", attribute="from", metadata={"description": "UTC, ISO 8601 with offset."})
    until = f.String(metadata={"description": "UTC, ISO 8601 with offset."})


class PlayerSchema(Schema):
    seat = f.Integer()
    name = f.String(allow_none=True)
    bot = f.String(allow_none=True, metadata={"description": "The bot kind answering for this seat, if any."})
    kid = f.String(allow_none=True, metadata={"description": "The seat key's RFC 7638 thumbprint."})
    public_key = f.String(allow_none=True)
    taken = f.Boolean()
    joined_at = f.String(allow_none=True)
    absences = f.List(f.Nested(AbsenceOutSchema), metadata={
        "description": "The seat's absences not ended yet (public: they explain a moved deadline)."})


class PhaseSummarySchema(Schema):
    id = f.Integer(metadata={"description": "The phase number: 1 for the first step, +1 per resolved step."})
    status = f.String(metadata={"description": "`collecting`, `resolving` or `finished`."})
    kind = f.String(allow_none=True, metadata={"description": "The order kind asked for."})
    sealed = f.Boolean(metadata={"description": "Simultaneous step: orders stay hidden until it resolves."})
    requested = f.List(f.Integer(), metadata={"description": "The seats that must answer."})
    opened_at = f.String(allow_none=True)
    deadline = f.String(allow_none=True, metadata={"description": "UTC, ISO 8601 with offset."})
    extended = f.Boolean()
    paused_since = f.String(allow_none=True, metadata={
        "description": "When the host paused the game (UTC, ISO 8601): its clock is stopped, the deadline moves on "
                       "by the time paused when the host resumes it. Null when not paused."})


class AbsenceSchema(Schema):
    from_ = f.String(required=True, data_key="from", attribute="from", metadata={
        "description": "When the absence begins: a UTC time (`2026-12-20T00:00:00Z`) or a date alone "
                       "(`2026-12-20`: its midnight UTC). One already begun starts now.",
        "example": "2026-12-20T00:00:00Z"})
    until = f.String(required=True, metadata={
        "description": "When the seat is back (after `from`; the same forms).", "example": "2027-01-03T00:00:00Z"})


class AbsencesInSchema(Schema):
    absences = f.List(f.Nested(AbsenceSchema), required=True, metadata={
        "description": "The seat's absences, replacing those declared before (`[]`: back, none planned). "
                       "Each at most `absence_max_days` long (30 by default), ending within a year, none "
                       "overlapping, at most `absence_max_count` (4 by default)."})


class AbsencesSchema(Schema):
    game = f.String()
    seat = f.Integer()
    absences = f.List(f.Nested(AbsenceOutSchema), metadata={"description": "The absences not ended yet."})
    away = f.Boolean(metadata={"description": "Whether the seat is away now."})
    text = f.String(metadata={"description": "The absences in words."})


class AbsencePolicySchema(Schema):
    absence = f.String(validate=v.OneOf(["extend", "bot"]), metadata={"description": "`extend` or `bot`."})
    absence_limit_seconds = Int(metadata={"description": "The most absences extend one step.", **STEP_BOUNDS})
    absence_bot = f.String(allow_none=True, metadata={
        "description": "A bot kind of the title; null: its first."})


class GameSchema(Schema):
    id = f.String()
    title = f.String()
    title_name = f.String()
    name = f.String()
    status = f.String(metadata={"description": "`lobby`, `running` or `finished`."})
    seats = f.Integer()
    options = f.Dict()
    deadlines = f.Nested(PolicySchema)
    mail_orders = f.String(metadata={"description": "`signed` or `reply_address` (see creating a game)."})
    press = f.String(metadata={"description": "`all`, `public` or `none`."})
    host_kid = f.String()
    created_at = f.String()
    expires_at = f.String(allow_none=True, metadata={
        "description": "While the game is in the lobby: when it is removed unless the host starts it first "
                       "(`lobby_ttl` after its creation; joining does not renew it); a day before, the game "
                       "gets a `lobby_closing` event. Null once started: a started game never expires."})
    updated_at = f.String(allow_none=True)
    players = f.List(f.Nested(PlayerSchema))
    phase = f.Nested(PhaseSummarySchema, allow_none=True)
    paused_since = f.String(allow_none=True, metadata={
        "description": "When the host paused the game (UTC, ISO 8601), null when it is not paused (as the "
                       "open phase's `paused_since`)."})
    result = f.List(f.Dict(), allow_none=True, metadata={"description": "The final ranking, once finished."})
    commitment = f.String(allow_none=True, metadata={
        "description": "Once started: the lowercase hex SHA-256 commitment to the game's seed (also in the "
                       "`game_started` event and in every view). The seed is published with the history "
                       "when the game is over, so anyone can check every draw."})
    rematch = f.Nested(lambda: GameLinkSchema(), allow_none=True, metadata={
        "description": "A finished game's rematch, once the host started it (`POST /games/{id}/rematch`): the "
                       "new game's `id` and `url` (its page); null before."})
    rematch_of = f.Nested(lambda: GameLinkSchema(), allow_none=True, metadata={
        "description": "A rematch's game: the finished game it replays (`id`, `url`); null for any other game."})
    clocks = f.Dict(keys=f.String(), values=f.Dict(), allow_none=True, metadata={
        "description": "With a time bank (`deadlines.clock: bank`), once started: each seat (by number) as "
                       "`{bank_seconds, runs_out_at}`: the seconds left on its clock now, and, for a seat asked "
                       "and not answered, when its clock runs out (UTC, ISO 8601; null otherwise or while the "
                       "game is paused). Null without a time bank."})


class GameLinkSchema(Schema):
    id = f.String(metadata={"description": "The game's id."})
    url = f.String(metadata={"description": "The game's page."})


class RematchSchema(Schema):
    host_key = f.String(load_default=None, metadata={
        "description": "The rematch's host key (Ed25519 public key, base64url): a fresh key per game, as the page "
                       "and `kontor game rematch` make. Left out: the finished game's host key hosts it too."})


class GamePatchSchema(Schema):
    status = f.String(required=True, validate=v.OneOf(["running"]), metadata={
        "description": "`running` starts the game (host only; every seat taken or a bot)."})


class JoinSchema(Schema):
    name = f.String(required=True, validate=v.Length(1, 80))
    public_key = f.String(required=True, metadata={"description": KEY_HELP})
    seat = Int(load_default=None, validate=v.Range(min=0),
               metadata={"description": "A seat to take; the first free one if omitted."})


class SeatPatchSchema(Schema):
    name = f.String(validate=v.Length(1, 80))
    public_key = f.String(metadata={"description": "Give the seat to a new player key. " + KEY_HELP})
    bot = f.String(allow_none=True, metadata={
        "description": "A bot kind (see /catalog) to answer for this seat; null makes it a player again "
                       "(with `public_key`)."})


class ChoicesYouSchema(Schema):
    seat = f.Integer()
    requested = f.Boolean()
    answered = f.Boolean()
    kind = f.String()
    choices = f.Dict(metadata={"description": "The legal choices, enumerated where small, bounds where large."})
    order_schema = f.Dict(metadata={"description": "A JSON Schema of the order."})
    default_order = f.Dict(metadata={"description": "What a missed deadline submits for you."})
    order = f.Dict(allow_none=True, metadata={"description": "Your stored order for this step, if any."})
    default_sentence = f.String(allow_none=True, metadata={
        "description": "The default order in words, or null when the title has none for it."})
    order_sentence = f.String(allow_none=True, metadata={
        "description": "Your stored order in words, or null (none stored, or no words for it)."})
    asked = f.String(allow_none=True, metadata={
        "description": "What is asked of you, in the title's words (from your own view only)."})
    prompt = f.Nested(lambda: PromptSchema(), allow_none=True, metadata={
        "description": "The first level of your open decision in words (`POST /games/{id}/seats/{seat}/choices` "
                       "walks it further), or null when nothing is asked of you or the title offers it only as "
                       "an order."})
    actions = f.Nested(lambda: PromptSchema(), allow_none=True, metadata={
        "description": "The first level of what you may do unprompted now (`of: action`), or null when nothing."})


class PhaseSchema(PhaseSummarySchema):
    answered = f.List(f.Integer(), metadata={"description": "Seats that have answered (never what)."})
    you = f.Nested(ChoicesYouSchema, allow_none=True, metadata={
        "description": "With a seat's bearer token: what is asked of that seat."})


class OrderSubmitSchema(Schema):
    token = f.String(required=True, metadata={
        "description": "A compact JWS (alg Ed25519, kid = your key's thumbprint) whose claims are "
                       "`game`, `phase`, `seat`, `iat`, `jti` (one-time id) and `order` (the order object)."})


class ReceiptSchema(Schema):
    game = f.String()
    phase = f.Integer()
    seat = f.Integer()
    received_at = f.String()
    via = f.String()
    replaced = f.Boolean(metadata={"description": "True when it replaced an earlier order of this step."})
    step_status = f.String(metadata={"description": "`resolving` when this was the last order the step needed."})
    receipt = f.String()
    order = f.Dict()


class ViewSchema(Schema):
    game = f.String()
    phase = f.Integer()
    viewer = f.Raw(metadata={"description": "Your seat, or `public`."})
    state = f.Dict(metadata={"description": "The game as you may see it."})
    headline = f.String(allow_none=True, metadata={
        "description": "Where the game stands, in a few words (\"round 2, phase 1: buying goods\")."})
    summary = f.String(allow_none=True, metadata={
        "description": "The game as you may see it, as readable plain text (about one screen), with player "
                       "names. `/games/{id}/picture.svg` is the same as a picture."})


class EventsArgsSchema(Schema):
    after = QueryInt(load_default=0, validate=v.Range(min=0, max=QUERY_INT_MAX),
                     metadata={"description": "Events after this id (your own ids: each reader numbers the "
                                              "events it may see 1, 2, 3, ...)."})
    limit = QueryInt(load_default=100, validate=v.Range(1, 500))


class StreamArgsSchema(Schema):
    after = QueryInt(load_default=None, validate=v.Range(min=0, max=QUERY_INT_MAX),
                     metadata={"description": "Replay the events after this id first (for clients that cannot "
                                              "send `Last-Event-ID`; the header wins)."})


class StreamHeadersSchema(Schema):
    class Meta:
        unknown = EXCLUDE

    last_event_id = QueryInt(data_key="Last-Event-ID", load_default=None, validate=v.Range(min=0, max=QUERY_INT_MAX),
                             metadata={"description": "The id of the last event received: the events after it "
                                                      "are sent first.", "example": 120})


class EventPageSchema(Schema):
    items = f.List(f.Dict(), metadata={"description": "Events with `id`, `at`, `type`, `phase`; only those "
                                                      "you may see, numbered by you: the public (and the host) "
                                                      "and each seat number the events they may see 1, 2, 3, ... "
                                                      "with no gaps, so an id says nothing of the others."})
    next = f.Integer(metadata={"description": "Pass as `after` for the next page."})
    more = f.Boolean()
    last = f.Integer(metadata={"description": "The id of your last event."})


class TitleSchema(Schema):
    id = f.String()
    name = f.String()
    seats = f.Dict()
    options = f.Dict()
    bots = f.List(f.String())
    order_codes = f.Dict(keys=f.String(), values=f.String(), metadata={
        "description": "The codes an order of this title may be refused with (the generic ones included)."})
    rules_url = f.String(allow_none=True, metadata={
        "description": "The title's player's guide (an HTML page; `.md` appended: its markdown), or null."})


class HistoryActionSchema(Schema):
    seat = f.Integer(metadata={"description": "The seat that took the action."})
    action = f.Dict(metadata={"description": "The action, as its token carried it."})
    submitted = f.Dict(keys=f.String(), values=f.Dict(), metadata={
        "description": "The orders stored for the step when the action was taken (seat number as text -> order): "
                       "the rules may check an action against them."})
    state_sha256 = f.String(metadata={"description": "Lowercase hex SHA-256 of the engine state after the action."})
    events = f.List(f.Dict(), metadata={"description": "The engine's events of the action exactly as it made them."})


class HistoryRollbackSchema(Schema):
    to_phase = f.Integer(metadata={"description": "The step the game went back to: the replay returns to the state "
                                                  "it had when it opened (before its actions and orders)."})
    at_phase = f.Integer(metadata={"description": "The step that was open when the host rolled the game back."})
    new_phase = f.Integer(metadata={"description": "The step it opened: `at_phase + 1` (numbers are never reused)."})
    consented = f.Boolean(metadata={"description": "Whether every human seat agreed first (the steps undone had "
                                                   "revealed something hidden)."})
    orders = f.Dict(keys=f.String(), values=f.Dict(), metadata={
        "description": "The orders stored for the open step, discarded unresolved (seat number as text -> order)."})
    actions = f.List(f.Nested(HistoryActionSchema), metadata={
        "description": "The open step's unprompted actions, undone with it; a replay applies them to check them."})
    at = f.String(allow_none=True, metadata={"description": "When it was applied (seconds since the epoch)."})


class HistoryStepSchema(Schema):
    rollback = f.Nested(HistoryRollbackSchema, metadata={
        "description": "Only in a rollback entry (which has no other field): the host rolled the game back here."})
    abandoned = f.Boolean(metadata={
        "description": "True for a step a later rollback undid: replayed and checked, but not part of the game "
                       "that stands. Absent otherwise."})
    phase = f.Integer(metadata={"description": "The step's phase number."})
    orders = f.Dict(keys=f.String(), values=f.Dict(), metadata={
        "description": "The order each requested seat played (seat number as text -> order)."})
    defaults = f.List(f.Integer(), metadata={"description": "Seats whose order was the default (no answer)."})
    state_sha256 = f.String(metadata={
        "description": "Lowercase hex SHA-256 of the engine state after the step, as canonical JSON (sorted "
                       "keys, no spaces); steps recorded before digests were kept have none."})
    events = f.List(f.Dict(), metadata={
        "description": "The engine's events of the step exactly as it made them (all of them, hidden ones "
                       "included: the game is over); without the phase numbers and the service's own events."})
    actions = f.List(f.Nested(HistoryActionSchema), metadata={
        "description": "The unprompted actions taken while the step was open, in order; a replay applies them "
                       "(`Game.act`) before the step's orders. Absent when none was taken."})


class HistorySchema(Schema):
    format = f.String(metadata={"description": "`kontor-history/1`."})
    game = f.String()
    title = f.String()
    seats = f.Integer()
    options = f.Dict(metadata={"description": "The game's options, defaults filled in."})
    seed = f.Raw(metadata={"type": ["integer", "string"],
                           "description": "The game's seed: 64 hex digits (32 bytes) when the server made it; "
                                          "else the integer or text given when the game was created."})
    commitment = f.String(allow_none=True, metadata={
        "description": "The commitment published when the game started: SHA-256 of the seed's 32 bytes."})
    steps = f.List(f.Nested(HistoryStepSchema))
    result = f.List(f.Dict(), allow_none=True, metadata={"description": "The final ranking."})


class ReadySchema(Schema):
    status = f.String(metadata={"description": "`ready`."})
    titles_failed = f.Dict(keys=f.String(), values=f.String(), metadata={
        "description": "Titles (built-in or plugins) that failed to load: name -> what went wrong."})


class GameListArgsSchema(Schema):
    status = f.String(load_default=None, validate=v.OneOf(["lobby", "running", "finished"]))
    limit = QueryInt(load_default=50, validate=v.Range(1, 200))
    before = QueryFloat(load_default=None, metadata={"description": "Pass the previous page's `before`."})


class GameListItemSchema(Schema):
    id = f.String()
    title = f.String()
    name = f.String()
    status = f.String()
    seats = f.Integer()
    taken = f.Integer()
    created_at = f.String()


class GameListSchema(Schema):
    items = f.List(f.Nested(GameListItemSchema))
    before = f.Float(allow_none=True, metadata={"description": "Cursor of the next page; null at the end."})


class ContactSchema(Schema):
    """A seat's contact settings, as set (fields left out keep their value; null clears)."""

    email = f.String(allow_none=True, validate=v.Length(max=254), metadata={
        "description": "Where mails go (validated and normalized; a bad address is `bad_email`)."})
    webhook_url = f.String(allow_none=True, validate=v.Length(max=2000), metadata={
        "description": "An http(s) URL for Standard Webhooks deliveries. Setting a new URL makes a new signing "
                       "secret, answered once as `webhook_secret`."})
    webhook_events = f.List(f.String(validate=v.Length(max=64)), allow_none=True, validate=v.Length(max=32),
                            metadata={"description": (
                                "The event types the webhook gets (e.g. `[\"step.opened\", \"game.finished\"]` "
                                "for a program that acts only when asked), out of those of the API's `webhooks`; "
                                "null (the default): every type. Another type is `invalid_request`, and so is an "
                                "empty list (remove the webhook to get none). Clearing `webhook_url` clears it. "
                                "Mail is not filtered.")})
    rotate_secret = Bool(metadata={"description": "Make a new webhook signing secret (answered once)."})
    timezone = f.String(validate=v.Length(1, 64), metadata={
        "description": "An IANA time zone for the deadlines in mails, e.g. `Europe/Berlin` (default UTC)."})
    reminder_lead = Int(allow_none=True, metadata={
        "description": "Seconds before a deadline to remind the seat, if it has not answered (null: none).",
        "minimum": 1, "maximum": Settings.max_step_seconds})
    delivery = f.String(validate=v.OneOf(["asked", "every", "digest", "immediate"]), metadata={
        "description": "Which mails the seat gets. `asked` (the default): a mail only when something is asked "
                       "of you (with what happened since your last mail), plus messages to you and the game's "
                       "end; `every`: a mail for every step; `digest`: one mail a day. Whatever the mode, a step "
                       "that asks you something, reminders, the notice that a bot now plays your seat, a missed "
                       "deadline's default order played for you, and the game's end come at once. `immediate` "
                       "is the earlier name of `every` (taken, and answered as `every`). Webhooks get every "
                       "notice whatever the mode (or those `webhook_events` chooses)."})


class ContactOutSchema(Schema):
    seat = f.Integer()
    email = f.String(allow_none=True, metadata={"description": "Masked when the host reads it."})
    email_status = f.String(allow_none=True, metadata={
        "description": "`ok`, `failed` (a permanent delivery failure) or `unsubscribed`."})
    webhook_url = f.String(allow_none=True, metadata={"description": "Masked when the host reads it."})
    webhook_status = f.String(allow_none=True, metadata={
        "description": "`active`, or `disabled` (the endpoint answered 410 or kept failing)."})
    webhook_secret = f.String(metadata={
        "description": "Only in the answer that made it: the `whsec_` signing secret. Keep it; it is never "
                       "shown again."})
    webhook_secret_set = f.Boolean()
    webhook_events = f.List(f.String(), allow_none=True, metadata={
        "description": "The event types the webhook gets; null: every type."})
    timezone = f.String()
    reminder_lead = f.Integer(allow_none=True)
    delivery = f.String(metadata={"description": "`asked`, `every` or `digest` (see setting a contact)."})
    last_error = f.String(allow_none=True)
    updated_at = f.String(allow_none=True)


class DeliverySchema(Schema):
    id = f.String(metadata={"description": "Also the webhook's `webhook-id`."})
    seat = f.Integer()
    channel = f.String(metadata={"description": "`email` or `webhook`."})
    type = f.String(metadata={"description": "The first notice's type, e.g. `step.opened`."})
    types = f.List(f.String())
    phase = f.Integer(allow_none=True)
    target = f.String(metadata={"description": "The address or URL (masked for the host)."})
    status = f.String(metadata={
        "description": "`queued`, `sent`, `retrying`, `failed`, `disabled`, `skipped` (no SMTP configured) or "
                       "`suppressed` (unsubscribed)."})
    attempts = f.Integer()
    last_status = f.Integer(allow_none=True, metadata={
        "description": "The HTTP status of a webhook's last attempt (null: no answer)."})
    last_error = f.String(allow_none=True)
    next_attempt_at = f.String(allow_none=True)
    created_at = f.String()
    updated_at = f.String()


class DeliveryListArgsSchema(Schema):
    limit = QueryInt(load_default=50, validate=v.Range(1, 500))


class WebhookDataSchema(Schema):
    """A notice: what one seat is told, cut to what it may see."""

    game = f.String()
    game_name = f.String(allow_none=True)
    title = f.String()
    title_name = f.String()
    seat = f.Integer(metadata={"description": "The seat this delivery is for."})
    seat_name = f.String(allow_none=True)
    phase = f.Integer(allow_none=True)
    at = f.String(allow_none=True, metadata={"description": "UTC, ISO 8601 with offset."})
    events = f.List(f.Dict(), metadata={"description": "The events of the step the seat may see."})
    view = f.Dict(metadata={"description": "The seat's view of the game (left out when too large; see links)."})
    request = f.Dict(allow_none=True, metadata={
        "description": "`step.opened`, `deadline.reminder`: what is asked of the seat (kind, sealed, choices, "
                       "default_order, deadline, reply_to; with a time bank also `clock_seconds`, "
                       "`clock_runs_out_at` and `clock`, the seat's clock in words); null when nothing."})
    deadline = f.String(allow_none=True)
    ranking = f.List(f.Dict(), metadata={"description": "`game.finished`: the final ranking."})
    message = f.Dict(metadata={"description": "`message.received`: id, from, to, text, phase."})
    links = f.Dict(keys=f.String(), values=f.String(), metadata={
        "description": "URLs: the game, view and events (JSON), the rules, and `page`: the seat's web page "
                       "(with a one-step capability when the game takes reply-address orders and the seat is "
                       "asked)."})
    names = f.List(f.String(), metadata={"description": "The players' display names by seat."})
    sentences = f.List(f.String(), metadata={
        "description": "The events in the title's words, one sentence each (only those with something to say)."})
    headline = f.String(allow_none=True, metadata={"description": "Where the game stands, in a few words."})
    summary = f.String(allow_none=True, metadata={
        "description": "The seat's view as readable plain text (about one screen)."})
    asked = f.String(metadata={"description": "`step.opened`, when the seat is asked: what, in words."})
    default_played = f.String(metadata={
        "description": "`step.resolved`, when the seat did not answer in time: the default order played for it, "
                       "in words."})
    clock_played = f.String(metadata={
        "description": "`clock.ran_out`, to the seat out of time on a time bank: what was played for it, in words."})
    replaced = f.Integer(metadata={"description": "`seat.replaced`: the seat now played by a bot or another key."})
    bot = f.String(allow_none=True, metadata={
        "description": "`seat.replaced`: the bot kind now playing the seat (null: another player). On other "
                       "notices: the bot kind playing this seat, when a bot does (it is then asked nothing)."})
    yours = f.Boolean(metadata={"description": "`seat.replaced`: true when it is this seat that was replaced."})
    closes_at = f.String(metadata={
        "description": "`lobby.closing`: when the game nobody started is removed (UTC, ISO 8601)."})
    open_seats = f.List(f.Integer(), metadata={"description": "`lobby.closing`: the seats nobody has taken yet."})
    rematch = f.Dict(metadata={
        "description": "`rematch.started`: the new game: `game` (its id), `name`, `url` (its page), `seat` (this "
                       "seat's number there when the same holder holds it, else null)."})
    by_mail = f.Dict(metadata={
        "description": "`rematch.started`: how the seat plays the rematch by mail: `same_address` (its mail "
                       "settings carried over), `reply_orders`, `step` and `reply_to` (when the rematch's open "
                       "step asks the seat: where its reply goes), `bot`."})
    consent = f.Boolean(metadata={"description": "`rollback.proposed`: true when the host's rollback waits for this "
                                                 "seat's consent (`POST /games/{id}/rollback/consent`)."})
    paused = f.Boolean(metadata={
        "description": "`game.paused`, `game.resumed`, `deadline.extended`: whether the game's clock is stopped "
                       "now (the host paused it)."})


class WebhookEventSchema(Schema):
    """The body of every webhook delivery (Standard Webhooks payload)."""

    type = f.String(metadata={"description": "`step.opened`, `step.resolved`, `deadline.reminder`, "
                                             "`message.received`, `game.finished`, `seat.replaced`, "
                                             "`action.taken`, `lobby.closing`, `rematch.started`, "
                                             "`clock.ran_out`, `rollback.proposed`, `rollback.answered`, "
                                             "`game.paused`, `game.resumed`, `deadline.extended` or "
                                             "`absence.summary`."})
    timestamp = f.String(metadata={"description": "When it happened: UTC, ISO 8601 with offset."})
    data = f.Nested(WebhookDataSchema)


# -- choices and actions ----------------------------------------------------------------
MAX_PICK_TEXT = 200
MAX_SHEET = 64


class OptionSchema(Schema):
    value = f.Raw(metadata={"description": "What to put into `picks` to choose it (a text or an integer)."})
    label = f.String(metadata={"description": "The option in words."})
    words = f.List(f.String(), metadata={"description": "Other names a person may write for it."})
    place = f.String(metadata={"description": "The id of its element in the game's picture (`picture.svg`)."})
    hint = f.String(metadata={"description": "A longer line about it."})


class NumberSchema(Schema):
    label = f.String()
    min = f.Integer()
    max = f.Integer()
    step = f.Integer(metadata={"description": "Allowed values are `min + k * step`."})
    key = f.String(metadata={"description": "The field's key in a sheet's pick."})
    default = f.Integer(metadata={"description": "What a form fills in."})
    named = f.List(f.Nested(OptionSchema), metadata={
        "description": "Named values allowed besides the numbers (\"pass\"): pick their `value`."})
    unit = f.String()
    bounds = f.String(metadata={"description": "What it takes, in words, as every channel shows it."})


class AskSchema(Schema):
    key = f.String(metadata={"description": "Names the part for programs (`good`, `count`)."})
    kind = f.String(metadata={"description": "`choose` (pick an option's `value`), `number` (an integer or a "
                                             "named value) or `sheet` (an object of numbers by `key`)."})
    question = f.String()
    options = f.List(f.Nested(OptionSchema))
    number = f.Nested(NumberSchema)
    sheet = f.List(f.Nested(NumberSchema))


class PromptSchema(Schema):
    say = f.String(metadata={"description": "What to do now, one sentence."})
    picks = f.List(f.Raw(), metadata={"description": "The picks so far."})
    chosen = f.List(f.String(), metadata={"description": "The picks so far, in words."})
    ask = f.Nested(AskSchema, allow_none=True, metadata={
        "description": "What may be picked next; null when nothing more may be picked."})
    complete = f.Boolean(metadata={"description": "True when the picks make a whole order (or action)."})
    order = f.Dict(allow_none=True, metadata={
        "description": "The order (or action) the picks make, once complete: sign it and send it."})
    sentence = f.String(metadata={"description": "The order so far in words."})


class Pick(f.Raw):
    """One pick: a text (an option's value), an integer (a number, never a bool or a float)
    or an object of integers or texts by key (a sheet)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if type(value) is str and len(value) <= MAX_PICK_TEXT:
            return value
        if type(value) is int and abs(value) <= 2**53:
            return value
        if type(value) is dict and len(value) <= MAX_SHEET and all(
                type(k) is str and len(k) <= MAX_PICK_TEXT and (
                    (type(x) is int and abs(x) <= 2**53) or (type(x) is str and len(x) <= MAX_PICK_TEXT))
                for k, x in value.items()):
            return value
        raise self.make_error("invalid")

    default_error_messages = {"invalid": f"a pick is a text (at most {MAX_PICK_TEXT} characters), an integer, or "
                                         f"an object of at most {MAX_SHEET} integers by key"}


class ChoicesRequestSchema(Schema):
    picks = f.List(Pick(metadata={"oneOf": [
        {"type": "string", "maxLength": MAX_PICK_TEXT},
        {"type": "integer", "minimum": -2**53, "maximum": 2**53},
        {"type": "object", "maxProperties": MAX_SHEET, "propertyNames": {"maxLength": MAX_PICK_TEXT},
         "additionalProperties": {"oneOf": [{"type": "integer", "minimum": -2**53, "maximum": 2**53},
                                            {"type": "string", "maxLength": MAX_PICK_TEXT}]}}]}),
                   load_default=list, validate=v.Length(max=MAX_PICKS), metadata={
        "description": f"The picks so far, in order (at most {MAX_PICKS}): option values, numbers, sheets."})
    of = f.String(load_default="order", validate=v.OneOf(["order", "action"]), metadata={
        "description": "`order`: the open decision (default); `action`: what you may do unprompted."})
    words = f.String(validate=v.Length(1, MAX_WORDS), metadata={
        "description": f"A person's words (at most {MAX_WORDS} characters: \"cart 2 to Brügge\", \"Tuch 5, Wein "
                       "6\", an option's number), read as further picks after `picks`."})
    cap = f.String(validate=v.Length(1, 64), metadata={
        "description": "Instead of a bearer token: the capability of the seat's page link from its mail "
                       "(`cap` in `/play/{gid}/{seat}?step=&cap=`), for the open step it names only."})


class ChoicesSchema(Schema):
    step = f.Integer(metadata={"description": "The open step."})
    kind = f.String(allow_none=True, metadata={"description": "The open request's kind (an order); null for "
                                                              "an action."})
    prompt = f.Nested(PromptSchema)


class ActionSubmitSchema(Schema):
    token = f.String(required=True, validate=v.Length(1, 16384), metadata={
        "description": "A compact JWS (alg Ed25519, kid = your key's thumbprint) whose claims are `game`, `seat`, "
                       "`iat`, `jti` (one-time id) and `action` (the `order` of a complete action prompt)."})


class ActionEventSchema(Schema):
    class Meta:
        unknown = EXCLUDE

    id = f.Integer()
    at = f.String()
    type = f.String()
    phase = f.Integer()
    text = f.String(allow_none=True, metadata={"description": "The event in words."})


class ActionResultSchema(Schema):
    accepted = f.Boolean()
    game = f.String()
    seat = f.Integer()
    phase = f.Integer(metadata={"description": "The step open when the action was applied."})
    events = f.List(f.Dict(), metadata={
        "description": "The action's events that you may see, as `GET /games/{id}/events` lists them, each with "
                       "`text`, the event in words."})
