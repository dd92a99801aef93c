"""Plain words for people, shared by the `kontor` command and the service's mails and
webhooks: player names, sentences for the events Kontor itself adds (the start, a step
opened or resolved, the end, messages), a title's own sentences through its `Game`, the
final ranking with what decided it, and short lists of choices.

Pure: no I/O, no server imports. A title's words come only through its `Game`
(`describe_event`, `describe_request`, `summary`, `headline`); a title that fails to
describe something never takes a mail or a command down: the failure is logged and a
plain fallback said instead.

Rulings:
* Kontor's step counter is a *step* ("step 14"), never a "phase": a title's players know
  "phase" as a part of its own round (Die Händler has six). A title's `headline` says
  where the game stands in its own terms ("round 2, phase 3: moving carts").
* Players are named as the store names them (their display names); a seat without one
  is "Seat N".
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

log = logging.getLogger("kontor.words")

#: The events of a rollback (`service.core.rollback`).
ROLLBACK_EVENTS = ("game_rolled_back", "rollback_proposed", "rollback_agreed", "rollback_refused",
                   "rollback_withdrawn", "rollback_lapsed")
#: Events Kontor adds around a title's own (the title never describes these).
SERVICE_EVENTS = ("game_started", "step_opened", "step_resolved", "game_finished", "message", "seat_replaced",
                  "action_taken", "order_replaced", "lobby_closing", "rematch_started", "clock_ran_out",
                  "clock_played", *ROLLBACK_EVENTS,
                  # the game's clock (issue 25: service.core.hosting, service.core.absence)
                  "game_paused", "game_resumed", "deadline_extended", "absence_played", "absence_summary")
#: What a ranking row's `tiebreak` says about the row above it.
TIEBREAKS = ("credits", "level", "money", "shared")


# -- names -------------------------------------------------------------------------------
def seat_name(names: Sequence[str], seat: Any) -> str:
    if isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < len(names):
        return names[seat]
    return f"Seat {seat}" if isinstance(seat, int) else str(seat)


_KIND_RE = re.compile(r"\s*\([^()]*\bbot\)\s*$")


def given_name(name: str) -> str:
    """A seat's name without the kind of bot that plays it ("Greta (greedy bot)" -> "Greta")."""
    return _KIND_RE.sub("", name).strip()


def names_of(count: int, named: Mapping[int, Any]) -> list[str]:
    """Display names by seat from `{seat: name or None}`; "Seat N" where there is none."""
    out = []
    for seat in range(count):
        name = named.get(seat)
        out.append(str(name).strip() if name and str(name).strip() else f"Seat {seat}")
    return out


def listing(items: Sequence[str], conj: str = "and") -> str:
    """`Ada`, `Ada and Bob`, `Ada, Bob and Cy`."""
    items = [str(i) for i in items]
    if len(items) <= 1:
        return "".join(items) or "nobody"
    return f"{', '.join(items[:-1])} {conj} {items[-1]}"


def span(seconds: float) -> str:
    """`93784` -> `1d 2h 3m`; seconds only below a minute."""
    s = int(abs(seconds))
    if s < 60:
        return f"{s}s"
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        n, s = divmod(s, size)
        if n:
            parts.append(f"{n}{unit}")
    return " ".join(parts)


def duration(seconds: float) -> str:
    """A length of time in words, to the minute: `2 days 4 hours`, `35 minutes`, `less
    than a minute`."""
    s = int(max(0, seconds))
    if s < 60:
        return "less than a minute"
    parts = []
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        n, s = divmod(s, size)
        if n:
            parts.append(plural(n, unit))
    return " ".join(parts[:2])


def clock_text(name: str, clock: Mapping[str, Any] | None, you: bool = False) -> str | None:
    """A seat's time bank in words ("Carla: 2 days 4 hours left on her clock"; "You have
    ...") from its clock (`bank_seconds`, `runs_out_at`); None without one."""
    if not clock:
        return None
    left = duration(clock.get("bank_seconds") or 0)
    runs = clock.get("runs_out_at")
    when = f", running now: it runs out {utc_time(runs)}" if runs else ""
    if you:
        return f"You have {left} left on your clock{when}."
    return f"{name}: {left} left on the clock{when}."


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def number(n: Any) -> str:
    """A whole number as the titles write it (`4,000`); anything else as it is."""
    return f"{n:,}" if isinstance(n, int) and not isinstance(n, bool) else str(n)


# -- safe calls into a title -------------------------------------------------------------
def said(what: str, fn: Callable[..., Any], *args: Any) -> str | None:
    """`fn(*args)` as text, or None (logged) when the title fails or answers no text."""
    try:
        text = fn(*args)
    except Exception:  # a title's words must never stop a mail or a command
        log.exception("the title's %s failed", what)
        return None
    return text if isinstance(text, str) and text.strip() else None


def tidy(text: str) -> str:
    """One line: whitespace collapsed, decoration such as `== ... ==` taken off."""
    return " ".join(text.split()).strip("= ").strip()


# -- sentences ---------------------------------------------------------------------------
def describe(game: Any, event: Mapping[str, Any], names: Sequence[str]) -> str | None:
    """One sentence for `event` (an event as stored or as the API lists it), or None when
    there is nothing worth saying (a step that resolved as everyone asked)."""
    kind = event.get("type")
    if kind in SERVICE_EVENTS:
        return service_sentence(dict(event), names)
    if game is None:
        return f"{str(kind).replace('_', ' ')}."
    core = {k: v for k, v in event.items() if k not in ("id", "at")}
    text = said(f"describe_event({kind})", game.describe_event, core, names)
    if text and ("{'" in text or '{"' in text):  # a title's fallback that prints the raw event
        log.warning("the title has no sentence for %s events", kind)
        text = None
    return tidy(text) if text else f"{str(kind).replace('_', ' ').capitalize()}."


def service_sentence(ev: dict[str, Any], names: Sequence[str]) -> str | None:
    kind = ev.get("type")
    if kind in ("absence_played", "absence_summary") or (kind == "deadline_extended"
                                                         and ev.get("reason") == "absence"):
        return absence_sentence(ev, names)
    if kind == "game_started":
        players = [p.get("name") or f"Seat {p.get('seat')}" for p in ev.get("players") or [] if isinstance(p, dict)]
        players = players or list(names)
        again = f" It is a rematch of “{ev['rematch_of_name']}”, with the same players and a new shuffle." \
            if ev.get("rematch_of") and ev.get("rematch_of_name") else \
            " It is a rematch, with the same players and a new shuffle." if ev.get("rematch_of") else ""
        return f"The game begins with {listing(players)}.{again}"
    if kind == "step_opened":
        seats = [seat_name(names, s) for s in ev.get("seats") or []]
        if len(seats) == 1:
            return f"Now it is {seats[0]}'s turn."
        how = " (sealed: no order is shown before all have answered)" if ev.get("sealed") else ""
        return f"Now {listing(seats)} answer at once{how}."
    if kind == "step_resolved":
        late = [seat_name(names, s) for s in ev.get("defaults") or []]
        if not late:
            return None
        verb = "was" if len(late) == 1 else "were"
        return f"{listing(late)} did not answer in step {ev.get('phase')} and {verb} given the default order."
    if kind == "game_finished":
        return finish_sentence(ev.get("ranking") or [], names)
    if kind == "action_taken":
        return f"{seat_name(names, ev.get('seat'))} took an action."
    if kind == "order_replaced":
        return (f"{seat_name(names, ev.get('seat'))}'s order for step {ev.get('phase')} could no longer be carried "
                "out after an action taken in the meantime, so the default order was played instead.")
    if kind == "seat_replaced":
        seat = ev.get("seat")
        whose = f"{given_name(seat_name(names, seat))}'s seat" if isinstance(seat, int) else "A seat"
        if ev.get("bot"):
            return f"{whose} is now played by a {label(ev['bot'])} bot."
        return f"{whose} is now played by {ev.get('name') or 'another player'}."
    if kind in ("clock_ran_out", "clock_played"):
        who = seat_name(names, ev.get("seat"))
        by = ev.get("by")
        how = "the default order" if by in (None, "defaults") else f"a {label(by)} bot's order"
        if kind == "clock_played":
            return f"Your clock ran out in step {ev.get('phase')}, so this was played for you: " \
                   f"{(ev.get('said') or order_words(ev.get('order'))).rstrip('.')}."
        played = f": {(ev.get('said') or order_words(ev['order'])).rstrip('.')}" if "order" in ev else ""
        return f"{who} ran out of time on their clock in step {ev.get('phase')}, so {how} was played for them" \
               f"{played}."
    if kind == "lobby_closing":
        return (f"Nobody has started this game yet: it closes on {utc_time(ev.get('closes_at'))} and is then "
                "removed, unless the host starts it before (the host can give empty seats to bots).")
    if kind == "rematch_started":
        name = f"“{ev['name']}”" if ev.get("name") else "a new game"
        where = f": {ev['url']}" if ev.get("url") else ""
        return (f"The host started a rematch, {name}, with the same players and a new shuffle. "
                f"It has begun; play it on its page{where}")
    if kind in ROLLBACK_EVENTS:
        return rollback_sentence(ev, names)
    if kind == "game_paused":
        left = ev.get("left")
        rest = f", with {duration(left)} left before the deadline" if isinstance(left, int | float) else ""
        return f"The host paused the game; the clock is stopped{rest}. Nothing is resolved until the host resumes it."
    if kind == "game_resumed":
        paused = ev.get("paused_seconds")
        after = f" after {duration(paused)}" if isinstance(paused, int | float) else ""
        return f"The host resumed the game{after}; the deadline moved to {utc_time(ev.get('deadline'))}."
    if kind == "deadline_extended":
        seconds = ev.get("seconds")
        by = f" by {duration(seconds)}" if isinstance(seconds, int | float) else ""
        still = " (the game is still paused)" if ev.get("paused") else ""
        return f"The host extended the deadline{by}; it is now {utc_time(ev.get('deadline'))}{still}."
    if kind == "message":
        writer = ev.get("from")
        who = seat_name(names, writer) if isinstance(writer, int) else "The host"
        to = ev.get("to")
        whom = "everyone" if to in (None, "all") else listing([seat_name(names, s) for s in to]) \
            if isinstance(to, list) else seat_name(names, to)
        text = " ".join(str(ev.get("text") or "").split())
        return f"{who} wrote to {whom}: {text}" if text else f"{who} wrote to {whom}."
    return None


#: Why a rollback needs consent (`engine.core.rollback.REASONS`), in words, for one step and
#: for several (`{step}`: the step's number, or the steps' as a list).
REASON_WORDS = {
    "sealed": ("step {step} was sealed: its orders were secret until it resolved",
               "steps {step} were sealed: their orders were secret until they resolved"),
    "private_event": ("step {step} told some players what the others did not see",
                      "steps {step} told some players what the others did not see"),
    "hidden_change": ("step {step} drew, dealt, shuffled or rolled what nobody has seen",
                      "steps {step} drew, dealt, shuffled or rolled what nobody has seen"),
    "sealed_orders": ("sealed orders are already given for the open step {step}",
                      "sealed orders are already given for the open steps {step}"),
}
#: A reason without words of its own.
OTHER_REASON = ("step {step} revealed something hidden", "steps {step} revealed something hidden")


def reasons_text(reasons: Sequence[Mapping[str, Any]]) -> str:
    """The reasons a rollback needs consent, in words, the steps of one reason together
    ("steps 7, 9 and 12 were sealed: ... and step 8 told some players ...")."""
    steps: dict[str, list[str]] = {}
    for r in reasons:
        steps.setdefault(str(r.get("why")), []).append(str(r.get("phase")))
    said = []
    for why, listed in steps.items():
        one, many = REASON_WORDS.get(why, OTHER_REASON)
        said.append((one if len(listed) == 1 else many).format(step=listing(listed)))
    return listing(said)


def rollback_step(to: Any, step: Any) -> str:
    """The step a rollback goes back to, in words: "step 12 (Carla's turn: bid ...)"
    (`step`: its text, "Step 12: Carla's turn: bid ...", `service.core.rollback.step_text`)."""
    step = str(step or "")
    return f"step {to} ({step.split(': ', 1)[1]})" if ": " in step else f"step {to}"


def rollback_sentence(ev: dict[str, Any], names: Sequence[str]) -> str | None:
    """A rollback's events in words (`service.core.rollback`)."""
    kind, to, at = ev.get("type"), ev.get("to_phase"), ev.get("phase")
    what = rollback_step(to, ev.get("step"))
    if kind == "game_rolled_back":
        how = " with every player's consent" if ev.get("consented") else ""
        aside = "" if ev.get("set_aside") == 0 else f", and orders given for step {at} were set aside unseen"
        return (f"The host rolled the game back to {what}{how}; it is open again as step {ev.get('new_phase')}. "
                f"What was played from step {to} to step {at} no longer counts{aside}.")
    if kind == "rollback_proposed":
        who = listing([seat_name(names, s) for s in ev.get("seats") or []])
        return (f"The host proposes to go back to {what}. As {reasons_text(ev.get('reasons') or [])}, it happens "
                f"only if every player agrees: {who}. Agree or refuse on the game's page, by mail, or with the "
                "command line.")
    if kind == "rollback_agreed":
        return f"{seat_name(names, ev.get('seat'))} agrees to go back to step {to}."
    if kind == "rollback_refused":
        return f"{seat_name(names, ev.get('seat'))} refused to go back to step {to}, so the game goes on as it is."
    if kind == "rollback_withdrawn":
        return f"The host withdrew the proposal to go back to step {to}; the game goes on as it is."
    if kind == "rollback_lapsed":
        why = "its time ran out" if ev.get("why") == "expired" else "the game moved on to the next step"
        return f"The proposal to go back to step {to} lapsed: {why}."
    return None
# -- absences (issue 25) ---------------------------------------------------------------
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


def day(ts: Any, year: bool = False) -> str:
    """A moment as a day: `3 January` (`3 January 2027` with `year`), with its time when
    it is not midnight UTC (`3 January 14:30 UTC`)."""
    try:
        at = datetime.fromisoformat(ts) if isinstance(ts, str) else datetime.fromtimestamp(float(ts), UTC)
    except (TypeError, ValueError):
        return "a date to be announced"
    at = at.astimezone(UTC)
    text = f"{at.day} {MONTHS[at.month - 1]}" + (f" {at.year}" if year else "")
    return text if (at.hour, at.minute) == (0, 0) else f"{text} {at:%H:%M} UTC"


def away_span(start: Any, end: Any) -> str:
    """`20 December to 3 January`."""
    return f"{day(start)} to {day(end)}"


def absence_sentence(ev: Mapping[str, Any], names: Sequence[str]) -> str:
    """The words of the absence events: a deadline moved for an away seat, a decision
    played for an away seat, the summary told to it after its absence."""
    kind = ev.get("type")
    who = given_name(seat_name(names, ev.get("seat")))
    if kind == "deadline_extended":
        capped = (" (as far as the game's limit for absences allows; then the default is played)"
                  if ev.get("capped") else "")
        return (f"The deadline of step {ev.get('phase')} moves to {utc_time(ev.get('deadline'))} because {who} "
                f"is away until {day(ev.get('until'))}{capped}.")
    if kind == "absence_played":
        return f"While you are away, in step {ev.get('phase')} {played_words(ev)}."
    steps = [s for s in ev.get("steps") or [] if isinstance(s, Mapping)]
    head = f"While you were away ({away_span(ev.get('from'), ev.get('until'))})"
    if not steps:
        return f"{head}, nothing was decided for you."
    return f"{head}: " + "; ".join(f"in step {s.get('phase')} {played_words(s)}" for s in steps) + "."


def played_words(rec: Mapping[str, Any]) -> str:
    """`the greedy bot played for you: bid 12` / `the default order was played for you: pass`."""
    text = str(rec.get("text") or "").rstrip(".") or "its order"
    still = " (that step is still open: you may change it)" if rec.get("open") else ""
    if rec.get("by") == "bot":
        return f"the {label(str(rec.get('bot') or ''))} bot played for you: {text}{still}".replace("the  bot",
                                                                                                 "a bot")
    return f"the default order was played for you at the deadline: {text}"


def utc_time(ts: Any) -> str:
    """A time stamp (epoch seconds, or ISO 8601) as people read it: `Sun 2026-12-06 07:36 UTC`."""
    try:
        at = datetime.fromisoformat(ts) if isinstance(ts, str) and "T" in ts else datetime.fromtimestamp(float(ts), UTC)
    except (TypeError, ValueError):
        return "a date to be announced"
    return f"{at.astimezone(UTC):%a %Y-%m-%d %H:%M} UTC"


def finish_sentence(ranking: Sequence[Mapping[str, Any]], names: Sequence[str]) -> str:
    first = [seat_name(names, r.get("seat")) for r in ranking if r.get("place") == 1]
    if not first:
        return "The game is over."
    if len(first) == 1:
        return f"The game is over: {first[0]} wins."
    return f"The game is over: {listing(first)} share first place."


def ranking_lines(ranking: Sequence[Mapping[str, Any]], names: Sequence[str], you: int | None = None) -> list[str]:
    """`1. Ada (you): status level 4, money 5200, no credits` (`1. Carla: 34 points`
    where the title scores) and, from the second row on, what set it apart from the row
    above (its `tiebreak`)."""
    out = []
    above: Mapping[str, Any] | None = None
    for row in ranking:
        who = seat_name(names, row.get("seat")) + (" (you)" if you is not None and row.get("seat") == you else "")
        facts = []
        if isinstance(row.get("score"), int) and not isinstance(row.get("score"), bool):
            facts.append(plural(row["score"], "point"))
        if row.get("level") is not None:
            facts.append(f"status level {row['level']}")
        if row.get("money") is not None:
            facts.append(f"money {number(row['money'])}")
        if row.get("credits") is not None:
            facts.append("no credits" if not row["credits"] else plural(int(row["credits"]), "credit"))
        line = f"{row.get('place')}. {who}" + (f": {', '.join(facts)}" if facts else "")
        why = tiebreak_words(row, above, names)
        out.append(line + (f" ({why})" if why else ""))
        above = row
    return out


def tiebreak_words(row: Mapping[str, Any], above: Mapping[str, Any] | None, names: Sequence[str]) -> str | None:
    """What set `row` apart from the row above it, in words."""
    how = row.get("tiebreak")
    if above is None or how not in TIEBREAKS:
        return None
    other = seat_name(names, above.get("seat"))
    if how == "shared":
        return f"shares the place with {other}: same level and money"
    if how == "credits":
        return f"behind {other} for still holding credits"
    if how == "level":
        return f"behind {other} on status level"
    return f"same status level as {other}; money decided"


# -- what is asked ---------------------------------------------------------------------
def asked_text(game: Any, request: Any, view: Mapping[str, Any], names: Sequence[str]) -> str | None:
    """The title's words for what `request` asks of its seat (a leading "Name:" taken
    off: the seat is told about itself)."""
    text = said(f"describe_request({getattr(request, 'kind', '?')})", game.describe_request, request, view, names)
    if not text:
        return None
    text = tidy(text)
    me = seat_name(names, getattr(request, "seat", None))
    for lead in (f"{me}: ", f"{me}, "):
        if text.startswith(lead) and len(text) > len(lead):
            text = text[len(lead):]
    return text


def short(text: str, limit: int = 60, clause: bool = True) -> str:
    """The first sentence of `text` (with `clause`, only its first clause: up to a comma,
    a colon or a parenthesis), at most `limit` characters."""
    line = " ".join(text.split())
    stops = (". ", "; ", ": ", " (", ", ") if clause else (". ", "; ")
    for stop in stops:
        if stop in line:
            line = line.split(stop, 1)[0]
    line = line.rstrip(".")
    if len(line) <= limit:
        return line
    cut = line[:limit].rsplit(" ", 1)[0] if " " in line[:limit] else line[:limit - 1]
    return cut.rstrip(" ,;:(") + "\N{HORIZONTAL ELLIPSIS}"


def lower_first(text: str, names: Sequence[str] = ()) -> str:
    """`Buy goods` -> `buy goods`; a name or an acronym keeps its capital."""
    first = text.split(" ", 1)[0]
    if not text or first in names or first.isupper() or not text[:1].isupper():
        return text
    return text[:1].lower() + text[1:]


def round_part(headline: str | None) -> str | None:
    """`round 2` of `round 2, phase 1: buying goods` (the whole of a short headline)."""
    if not headline:
        return None
    return headline.split(",", 1)[0].strip() or None


# -- plain values ------------------------------------------------------------------------
def plain(value: Any) -> str:
    """A JSON value in words, without braces: `3`, `yes`, `tuch 100, wein 100`,
    `(good wein, city LYO), (good salz, city BRU)`."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float | str):
        return str(value)
    if isinstance(value, list):
        return ", ".join(nested(v) for v in value) if value else "none"
    if isinstance(value, dict):
        return ", ".join(f"{label(k)} {nested(v)}" for k, v in value.items()) if value else "none"
    return str(value)


def nested(value: Any) -> str:
    text = plain(value)
    return f"({text})" if isinstance(value, dict | list) and value else text


def label(key: Any) -> str:
    return str(key).replace("_", " ")


def choice_lines(choices: Any, width: int = 160) -> tuple[list[str], bool]:
    """The legal choices in words where they are short (`max: 3`, `prices: tuch 100,
    wein 100`); and whether some were too long to say so."""
    if not isinstance(choices, dict):
        return [], bool(choices)
    out, left = [], False
    for key, value in choices.items():
        text = plain(value)
        if len(text) > width:
            left = True
            continue
        out.append(f"{label(key)}: {text}")
    return out, left


def order_words(order: Any) -> str:
    """An order in words: `bid: 300`, `goods: (good wein, city LYO)`, `goods: none`."""
    if not isinstance(order, dict):
        return plain(order)
    if not order:
        return "an empty order"
    return "; ".join(f"{label(k)}: {plain(v)}" for k, v in order.items())


# -- rule citations ----------------------------------------------------------------------
#: A rule number (`H-41`, `T3`, `FD12`; a range `H-41 to H-44` or `O13–O16`; a ruling
#: `R-30`) or a decision name (`D1-BUY`) as a guide's heading names it: each gets an
#: anchor in the player's guide (`service.http.resources.titles`).
RULE_RE = re.compile(r"\b(?:(?P<d>D\d+-[A-Z]+)"
                     r"|(?P<p>[A-Z]{1,3})(?P<h>-?)(?P<a>\d{1,3})(?:\s*(?:to|–|—)\s*(?P=p)(?P=h)(?P<b>\d{1,3}))?)\b")
#: The longest range a heading may name whose numbers all get an anchor.
MAX_RANGE = 200
#: One rule id as texts cite it: `H-41`, `T3`, `FD12`, `S6`, `R-30a`.
_ID = r"[A-Z]{1,3}-?\d{1,3}[a-z]?"
#: A citation: rule ids in parentheses, alone or as a list or a range ("(H-96)", "(T5, R17)",
#: "(H-60 to H-70)", "(see H-41)"), with the space before it.
CITATION_RE = re.compile(rf"\s?\(\s*(?:(?:see|rules?)\s+)?(?P<ids>{_ID}(?:\s*(?:,|/|and|to|\u2013)\s*{_ID})*)\s*\)")
#: A rule cited as a link in a text ("rule H-41 https://.../titles/haendler/rules#H-41"):
#: what `cite_rules` writes for text and `rule_links` turns into an HTML link.
RULE_LINK_RE = re.compile(r"\brules? (?P<what>[A-Z]{1,3}-?\d{1,3}[a-z]?(?: to [A-Z]{1,3}-?\d{1,3}[a-z]?)?) "
                          r"(?P<url>https?://[^\s<>\"']+#[A-Za-z0-9-]+)")


def rule_ids(text: str) -> list[str]:
    """The rule numbers and decision names a guide's heading names (ranges spelled out)."""
    out: list[str] = []
    for m in RULE_RE.finditer(text):
        if m["d"]:
            out.append(m["d"])
            continue
        a, b = int(m["a"]), int(m["b"] or m["a"])
        if b < a or b - a > MAX_RANGE:
            b = a
        out += [f"{m['p']}{m['h']}{n}" for n in range(a, b + 1)]
    return out


def rule_anchors(guide: str) -> frozenset[str]:
    """The rule ids that have an anchor in a player's guide (its markdown): those its
    headings name."""
    heads = (line.lstrip("#") for line in guide.splitlines() if line.startswith("#"))
    return frozenset(rule for head in heads for rule in rule_ids(head))


def cite_rules(text: str, guide_url: str | None, anchors: Iterable[str], html: bool = False) -> str:
    """`text` with its rule citations made links to the rule's anchor in the player's
    guide (`guide_url`, e.g. `https://kontor.example/titles/haendler/rules`): "(H-96)"
    becomes "(rule H-96 https://.../rules#H-96)" (text) or a link "rule H-96" (`html`:
    the whole text escaped). A cited rule without an anchor is dropped, and so is a
    citation left with none: no rule id is read outside a link."""
    known = frozenset(anchors)
    pieces: list[tuple[str, str | None]] = []  # (text, url): a link where url is set
    last = 0
    for m in CITATION_RE.finditer(text):
        pieces.append((text[last:m.start()], None))
        last = m.end()
        links = _cited(m["ids"], known, guide_url) if guide_url else []
        if not links:
            continue
        lead = " (" if m.group(0).startswith((" ", "\t", "\n")) else "("
        pieces.append((lead, None))
        for i, (what, url) in enumerate(links):
            if i:
                pieces.append((", ", None))
            pieces.append((what, url))
        pieces.append((")", None))
    pieces.append((text[last:], None))
    if not html:
        return "".join(f"rule {t} {u}" if u else t for t, u in pieces)
    from markupsafe import Markup, escape

    return str(Markup("").join(Markup('<a href="{}">rule {}</a>').format(u, t) if u else escape(t)
                               for t, u in pieces))


def _cited(ids: str, known: frozenset[str], guide_url: str) -> list[tuple[str, str]]:
    """The anchored rules of a citation's ids, each (what, url): a range "H-60 to H-70"
    links to its first rule."""
    out: list[tuple[str, str]] = []
    for part in re.split(r"\s*(?:,|/|\band\b)\s*", ids):
        ends = [x.strip() for x in re.split(r"\s*(?:\bto\b|\u2013)\s*", part) if x.strip()]
        if ends and ends[0] in known:
            out.append((" to ".join(ends[:2]), f"{guide_url.rstrip('/')}#{ends[0]}"))
    return out


def without_rule_links(text: str) -> str:
    """`text` less its rule links ("rule H-41 <url>") and URLs: what a scan for ids reads."""
    return re.sub(r"https?://\S+", "", RULE_LINK_RE.sub("", text))
