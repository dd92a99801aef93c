"""Reading an inbound mail (pure): its envelope fields and the last `#orders` ... `#end`
block outside quoted text. The rulings are in `service.channels.inbound.judge`."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage, Message
from email.parser import BytesHeaderParser
from email.utils import getaddresses, parseaddr
from html.parser import HTMLParser
from typing import Any

from service.core.errors import Problem
from service.protocol.pairs import parse_pairs

_ORIGINAL_RE = re.compile(r"^\s*-{2,}\s*Original Message\s*-{2,}\s*$", re.IGNORECASE)
_ATTRIBUTION_RE = re.compile(r"^\s*(On\s.+\swrote|Am\s.+\sschrieb.*|Le\s.+\sa\s+écrit)\s*:\s*$", re.IGNORECASE)
_TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$")
_BLOCK_TAGS = {"p", "div", "br", "li", "tr", "pre", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "table"}
_HIDDEN_TAGS = {"script", "style", "head", "title"}


# -- parsing (pure) ----------------------------------------------------------------------
@dataclass(frozen=True)
class Block:
    """One `#orders` ... `#end` block: a token or an order, and what its head line named."""

    head: tuple[str, int, int] | None = None  # game, seat, phase
    token: str | None = None
    order: dict[str, Any] | None = None
    words: str | None = None  # an order in plain words, read against the step (`service.protocol.plain`)


@dataclass
class Inbound:
    """What a mail says, as far as orders go. `errors`: (code, detail) pairs found while
    reading the block; `auto`: why the mail is automatic (None for a person's mail)."""

    sender: str
    recipients: list[str]
    message_id: str
    subject: str
    references: str = ""
    in_reply_to: str = ""
    block: Block | None = None
    errors: list[tuple[str, str]] = field(default_factory=list)
    auto: str | None = None
    text: list[str] = field(default_factory=list)  # the lines the sender wrote (no quote, signature)


@dataclass(frozen=True)
class Bounds:
    """How large an inbound mail may be: bytes, MIME parts (nested ones counted) and depth
    of nesting (the settings `inbound_max_bytes`, `inbound_max_parts`, `inbound_max_depth`)."""

    max_bytes: int = 1024 * 1024
    max_parts: int = 50
    max_depth: int = 8


def parse(raw: bytes, bounds: Bounds | None = None) -> Inbound:
    """Read a raw mail (RFC 5322 bytes). A mail beyond `bounds` is read for its headers
    only and carries the refusal in `errors` (its body is never walked)."""
    bounds = bounds or Bounds()
    if len(raw) > bounds.max_bytes:
        return _headers_only(raw, "mail_too_large", f"the mail is {len(raw)} bytes; at most {bounds.max_bytes} "
                                                    "are taken (send the order alone, without attachments)")
    try:
        msg = message_from_bytes(raw, policy=policy.default)
    except RecursionError:
        return _headers_only(raw, "mail_too_deep", _too_deep(bounds))
    too_much = beyond(msg, bounds)
    if too_much:
        return _headers_only(raw, *too_much)
    mail = _envelope(msg)
    try:
        lines = body_lines(msg)
    except RecursionError:  # bounded above; never a crash all the same
        mail.errors.append(("mail_too_deep", _too_deep(bounds)))
        return mail
    mail.text = written(lines)
    try:
        mail.block = find_block(lines)
    except Problem as exc:
        mail.errors.append((exc.code, exc.detail))
    return mail


def _envelope(msg: Message) -> Inbound:
    return Inbound(sender=address_of(msg.get("From")), recipients=_recipients(msg, ("To", "Cc")),
                   message_id=_one_line(msg.get("Message-ID")), subject=_one_line(msg.get("Subject")),
                   references=_one_line(msg.get("References")), in_reply_to=_one_line(msg.get("In-Reply-To")),
                   auto=automatic(msg))


def _headers_only(raw: bytes, code: str, detail: str) -> Inbound:
    """A mail refused for its shape: its headers (for the seat and the receipt), no body."""
    mail = _envelope(BytesHeaderParser(policy=policy.default).parsebytes(raw))
    mail.errors.append((code, detail))
    return mail


def _too_deep(bounds: Bounds) -> str:
    return (f"the mail nests its parts more than {bounds.max_depth} deep; send the order as plain text, "
            "without forwarded or attached mails")


def beyond(msg: Message, bounds: Bounds) -> tuple[str, str] | None:
    """(code, detail) when `msg` has more parts or deeper nesting than `bounds` allow,
    found without recursion (a stack of parts, each counted once)."""
    stack: list[tuple[Message, int]] = [(msg, 0)]
    parts = 0
    while stack:
        part, depth = stack.pop()
        parts += 1
        if parts > bounds.max_parts:
            return ("mail_too_many_parts", f"the mail has more than {bounds.max_parts} parts; send the order as "
                                           "plain text, without attachments")
        if depth > bounds.max_depth:
            return ("mail_too_deep", _too_deep(bounds))
        payload = part.get_payload() if part.is_multipart() else None
        if isinstance(payload, list):
            stack.extend((sub, depth + 1) for sub in payload if isinstance(sub, Message))
    return None


def _one_line(value: Any) -> str:
    """A header's value with its whitespace collapsed (it is echoed in the receipt's headers)."""
    return " ".join(str(value or "").split())


def address_of(value: Any) -> str:
    """The bare address of a header value (`Name <a@b>` -> `a@b`)."""
    return parseaddr(str(value or ""))[1]


def _recipients(msg: Message, names: tuple[str, ...]) -> list[str]:
    values = [str(v) for name in names for v in msg.get_all(name) or []]
    return [addr for _, addr in getaddresses(values) if addr]


def automatic(msg: Message) -> str | None:
    """Why `msg` was sent by a machine (RFC 3834), or None."""
    auto = str(msg.get("Auto-Submitted") or "no").split(";")[0].strip().lower()
    if auto != "no":
        return f"the mail is automatic (Auto-Submitted: {auto})"
    precedence = str(msg.get("Precedence") or "").strip().lower()
    if precedence in ("bulk", "junk", "list"):
        return f"the mail is automatic (Precedence: {precedence})"
    return None


def body_lines(msg: EmailMessage) -> list[str]:
    """The lines of the readable body, unflowed and cut at the signature line or at an
    Outlook-style "Original Message" line (a top-posted quote without `>` marks);
    quoted lines keep their `>` so the block finder skips them."""
    part = msg.get_body(preferencelist=("plain",))
    if part is not None:
        text = _content(part)
        params = getattr(part["Content-Type"], "params", {})
        if params.get("format", "").lower() == "flowed":
            text = unflow(text, params.get("delsp", "").lower() == "yes")
    else:
        part = msg.get_body(preferencelist=("html",))
        text = html_text(_content(part)) if part is not None else ""
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if line == "-- " or _ORIGINAL_RE.match(line):
            return lines[:n]
    return lines


def written(lines: list[str]) -> list[str]:
    """The lines the sender wrote: up to an attribution line ("On ... wrote:", "Am ...
    schrieb ...:") and without quoted lines or blank lines."""
    out = []
    for line in lines:
        if _ATTRIBUTION_RE.match(line):
            break
        if line.strip() and not line.lstrip().startswith(">"):
            out.append(line.strip())
    return out


def _content(part: Any) -> str:
    try:
        return str(part.get_content())
    except (LookupError, UnicodeError):  # an unknown or lying charset
        return bytes(part.get_payload(decode=True) or b"").decode("utf-8", "replace")


def unflow(text: str, delsp: bool) -> str:
    """Undo RFC 3676 `format=flowed`: a line ending in a space continues on the next line
    of the same quote depth (the space removed too with `DelSp=yes`); space-stuffing is
    removed. The signature line `-- ` is never flowed."""
    out: list[str] = []
    paragraph: str | None = None
    depth = 0
    for line in text.splitlines():
        quotes = len(line) - len(line.lstrip(">"))
        content = line[quotes:]
        content = content[1:] if content.startswith(" ") else content
        if paragraph is not None and quotes != depth:  # a broken paragraph: end it here
            out.append(_quoted(depth, paragraph))
            paragraph = None
        flowed = content.endswith(" ") and content != "-- "
        if flowed and delsp:
            content = content[:-1]
        paragraph, depth = (paragraph or "") + content, quotes
        if not flowed:
            out.append(_quoted(depth, paragraph))
            paragraph = None
    if paragraph is not None:
        out.append(_quoted(depth, paragraph))
    return "\n".join(out)


def _quoted(depth: int, text: str) -> str:
    return f"{'>' * depth} {text}" if depth else text


class _HTMLText(HTMLParser):
    """HTML to text lines: block elements break lines, `<blockquote>` lines are quoted."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.line = ""
        self.quote = 0
        self.hidden = 0
        self.pre = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self._tag(tag, +1)

    def handle_endtag(self, tag: str) -> None:
        self._tag(tag, -1)

    def _tag(self, tag: str, step: int) -> None:
        if tag in _BLOCK_TAGS:
            self.flush()
        if tag == "blockquote":
            self.quote = max(0, self.quote + step)
        elif tag == "pre":
            self.pre = max(0, self.pre + step)
        elif tag in _HIDDEN_TAGS:
            self.hidden = max(0, self.hidden + step)

    def handle_data(self, data: str) -> None:
        if self.hidden:
            return
        if self.pre:
            first, *rest = data.split("\n")
            self.line += first
            for piece in rest:
                self.flush()
                self.line = piece
        else:
            self.line += re.sub(r"\s+", " ", data)

    def flush(self) -> None:
        if self.line.strip():
            self.lines.append(_quoted(self.quote, self.line.strip()))
        self.line = ""


def html_text(html: str) -> str:
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    parser.flush()
    return "\n".join(parser.lines)


def find_block(lines: list[str]) -> Block | None:
    """The last complete `#orders` ... `#end` block outside quoted lines, read; None if
    there is none. Raises `Problem` for a block that cannot be read."""
    found: tuple[str, list[str]] | None = None
    current: tuple[str, list[str]] | None = None
    for raw in lines:
        line = raw.strip()
        if line.startswith(">"):
            continue
        word = line.split(maxsplit=1)[0].lower() if line else ""
        if word == "#orders":
            current = (line, [])
        elif word == "#end" and current is not None:
            found, current = current, None
        elif current is not None:
            current[1].append(line)
    if found is None:
        if current is not None:
            raise Problem("bad_order_block", "the '#orders' line has no '#end' line after it")
        return None
    return read_block(*found)


def read_block(head_line: str, lines: list[str]) -> Block:
    head = _head(head_line.split()[1:])
    text = "\n".join(line for line in lines if line)
    if not text:
        raise Problem("bad_order_block", "the block between '#orders' and '#end' is empty")
    packed = "".join(text.split())
    if _TOKEN_RE.match(packed):
        return Block(head, token=packed)
    if text.startswith("{"):
        try:
            order = json.loads(text)
        except ValueError as exc:
            raise Problem("malformed_order", f"the order is not valid JSON: {exc}") from None
        if not isinstance(order, dict):
            raise Problem("malformed_order", "an order is a JSON object")
        return Block(head, order=order)
    if text.startswith("["):
        raise Problem("bad_order_block", "the block holds a JSON list; an order is a JSON object, KEY=VALUE "
                                         "lines or the order in plain words")
    lines = text.splitlines()
    if any("=" in line for line in lines):
        try:
            return Block(head, order=parse_pairs(lines))
        except ValueError as exc:
            raise Problem("bad_order_block", f"{exc}; the block holds an order token, a JSON object, "
                                             "KEY=VALUE lines or the order in plain words") from None
    return Block(head, words="\n".join(lines))  # lines kept: a decision of several parts is a few lines


def _head(words: list[str]) -> tuple[str, int, int] | None:
    if not words:
        return None
    if len(words) != 3 or not words[1].isdigit() or not words[2].isdigit():
        raise Problem("bad_order_block", "the '#orders' line is '#orders' alone or '#orders <game> <seat> <phase>'")
    return words[0].lower(), int(words[1]), int(words[2])




# -- rollback consent (issue 25) ----------------------------------------------------------
#: What a reply says to answer the host's rollback proposal (`service.core.rollback`),
#: folded to lower case with its spaces collapsed: "agree to roll back" or "refuse the
#: roll back" (docs/mail.md), and the few ways people write the same.
ROLLBACK_AGREE = frozenset(f"{verb} {to}{the}{word}" for verb in ("agree", "i agree") for to in ("to ", "")
                           for the in ("the ", "") for word in ("roll back", "rollback", "roll-back"))
ROLLBACK_REFUSE = frozenset(f"{verb} {the}{word}" for verb in ("refuse", "i refuse", "refuse to", "i refuse to")
                            for the in ("the ", "") for word in ("roll back", "rollback", "roll-back"))


def rollback_consent(text: str) -> bool | None:
    """True for a reply that agrees to the pending rollback, False for one that refuses
    it, None for anything else (read as an order or an action). The whole reply (its
    written lines) must say it, with nothing else but a full stop."""
    said = " ".join(text.lower().replace("\N{RIGHT SINGLE QUOTATION MARK}", "'").split()).rstrip(".!")
    if said in ROLLBACK_AGREE:
        return True
    if said in ROLLBACK_REFUSE:
        return False
    return None
# -- absences by mail (issue 25) ---------------------------------------------------------
_MONTHS = {m: i + 1 for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august",
                                           "september", "october", "november", "december"))}
_MONTHS.update({m[:3]: n for m, n in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_DATE = (r"(?:\d{4}-\d{2}-\d{2}|\d{1,2}(?:st|nd|rd|th)?\.?\s+[a-z]+\.?(?:\s+\d{4})?"
         r"|[a-z]+\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?)")
#: `away <date> to <date>` (groups 1, 2) and `away until <date>` (group 1).
_AWAY_RE = re.compile(rf"^away\s+(?:from\s+)?({_DATE})\s+(?:to|until|till|-|–)\s+({_DATE})\.?$")
_UNTIL_RE = re.compile(rf"^away\s+(?:until|till|to)\s+({_DATE})\.?$")
_BACK = ("back", "i'm back", "i am back", "back again")


@dataclass(frozen=True)
class AbsenceWords:
    """What a mail's `away` / `back` lines said: `back` (clear every planned absence), or
    absences as (from, until) dates (`date.isoformat()`; None for "from now")."""

    back: bool = False
    away: tuple[tuple[str | None, str], ...] = ()


def absence_words(lines: list[str], today: Any) -> AbsenceWords | None:
    """The absence the written lines say (`away 20 December to 3 January`, `away
    2026-12-20 to 2027-01-03`, `away from Dec 20 to Jan 3`, `away until 3 January`, or
    `back`), else None (not about absences). A date without a year is the next such day
    (on or after `today`); an end without a year, the first such day after the start.
    Raises `Problem('bad_absence')` for an `away` line it cannot read."""
    said = [" ".join(line.strip().lower().split()) for line in lines if line.strip()]
    if not said or not said[0].startswith(("away", "back", "i'm back", "i am back")):
        return None
    if said[0].rstrip(".!") in _BACK:  # what follows (a signature) is not read
        return AbsenceWords(back=True)
    out: list[tuple[str | None, str]] = []
    for line in said:
        if not line.startswith("away"):
            break  # what follows (a signature) is not read
        m = _AWAY_RE.match(line) or _UNTIL_RE.match(line)
        if m is None or not all(m.groups()):
            raise Problem("bad_absence", f"could not read {line!r}: write 'away 20 December to 3 January', 'away "
                                         "2026-12-20 to 2027-01-03', 'away until 3 January' or 'back'")
        # A start without a year may be a day just gone (the absence under way): the last 30 days count.
        said_first, said_last = (m.group(1), m.group(2)) if m.re is _AWAY_RE else (None, m.group(1))
        first = _day(said_first, today - timedelta(days=30)) if said_first else None
        last = _day(said_last, first or today)
        out.append((first.isoformat() if first else None, last.isoformat()))
    return AbsenceWords(away=tuple(out)) if out else None


def _day(text: str, after: Any) -> Any:
    """A date in words or ISO form; without a year, the first such day on or after `after`."""
    text = text.strip().rstrip(".")
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            return date.fromisoformat(text)
        parts = re.findall(r"[a-z]+|\d+", text)
        parts = [p for p in parts if p not in ("st", "nd", "rd", "th")]
        nums = [int(p) for p in parts if p.isdigit()]
        names = [p for p in parts if not p.isdigit()]
        if len(names) != 1 or names[0] not in _MONTHS or not 1 <= len(nums) <= 2:
            raise ValueError(text)
        month = _MONTHS[names[0]]
        day_ = nums[0] if nums[0] <= 31 else nums[-1]
        if len(nums) == 2:
            return date(max(nums), month, min(nums) if max(nums) > 31 else day_)
        found = date(after.year, month, day_)
        return found if found >= after else date(after.year + 1, month, day_)
    except ValueError:
        raise Problem("bad_absence", f"{text!r} is not a date: write '20 December', 'Dec 20' or "
                                     "'2026-12-20'") from None
