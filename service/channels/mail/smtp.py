"""Sending one mail over SMTP (stdlib smtplib), configured by `KONTOR_SMTP_URL`:

* `smtp://[user:pass@]host[:port]`: plain SMTP (port 25 by default);
* `smtp+starttls://...`: STARTTLS before anything else (port 587 by default);
* `smtps://...`: implicit TLS (port 465 by default).

User and password are URL-encoded in the URL. Errors are smtplib's own exceptions;
`temporary(exc)` tells a failure worth retrying from a permanent one.
"""

from __future__ import annotations

import smtplib
import ssl
from email.message import EmailMessage
from urllib.parse import unquote, urlsplit

#: Seconds to wait for the SMTP server at each step.
TIMEOUT = 30.0


def send_message(smtp_url: str, msg: EmailMessage, timeout: float = TIMEOUT) -> None:
    """Send `msg` (its own From/To/Cc headers give the envelope)."""
    parts = urlsplit(smtp_url)
    scheme = parts.scheme.lower()
    if scheme not in ("smtp", "smtp+starttls", "smtps") or not parts.hostname:
        raise ValueError(f"KONTOR_SMTP_URL must be smtp://, smtp+starttls:// or smtps:// with a host: {smtp_url!r}")
    default_port = {"smtp": 25, "smtp+starttls": 587, "smtps": 465}[scheme]
    port = parts.port or default_port
    # Loading the CA store costs tens of milliseconds: only when TLS will use it.
    context = ssl.create_default_context() if scheme != "smtp" else None
    client: smtplib.SMTP
    if scheme == "smtps":
        client = smtplib.SMTP_SSL(parts.hostname, port, timeout=timeout, context=context)
    else:
        client = smtplib.SMTP(parts.hostname, port, timeout=timeout)
    with client:
        if scheme == "smtp+starttls":
            client.starttls(context=context)
        if parts.username:
            client.login(unquote(parts.username), unquote(parts.password or ""))
        client.send_message(msg)


def temporary(exc: BaseException) -> bool:
    """True for a failure worth retrying: no connection, a timeout, a 4xx answer. A 5xx
    answer (or every recipient refused with 5xx) is permanent."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        return all(400 <= code < 500 for code, _ in exc.recipients.values())
    if isinstance(exc, smtplib.SMTPResponseException):
        return 400 <= exc.smtp_code < 500
    return isinstance(exc, OSError | smtplib.SMTPServerDisconnected | smtplib.SMTPConnectError)
