"""Webhooks per the Standard Webhooks specification (v1, HMAC-SHA256, `whsec_` secrets).

(To be completed: payloads, signing, delivery with the retry schedule.)
"""

from __future__ import annotations

import ipaddress
import socket
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from service.config import Settings
from service.problems import Problem

if TYPE_CHECKING:
    from service.games import Kontor


def check_target(url: str, settings: Settings) -> list[str]:
    """Refuse a webhook URL that is not http(s), or whose host resolves to a loopback,
    private, link-local, multicast or reserved address (unless the settings allow
    loopback or private targets): `webhook_target_refused`. Answers the addresses."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Problem("webhook_target_refused", "a webhook URL is http:// or https:// with a host", field="webhook_url")
    if parts.username or parts.password:
        raise Problem("webhook_target_refused", "a webhook URL carries no user or password", field="webhook_url")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (OSError, ValueError) as exc:
        raise Problem("webhook_target_refused", f"cannot resolve {parts.hostname!r}: {exc}",
                      field="webhook_url") from None
    addresses = sorted({str(info[4][0]) for info in infos})
    for text in addresses:
        ip = ipaddress.ip_address(text.split("%")[0])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
            ip = ip.ipv4_mapped
        if ip.is_loopback:
            if not settings.webhook_allow_loopback:
                raise Problem("webhook_target_refused", f"{parts.hostname} is a loopback address ({ip})",
                              field="webhook_url")
        elif not ip.is_global or ip.is_multicast:
            if not settings.webhook_allow_private:
                raise Problem("webhook_target_refused",
                              f"{parts.hostname} is on a private or reserved network ({ip})", field="webhook_url")
    return addresses


def deliver(k: Kontor, gid: str, delivery: str, attempt: int) -> str:
    raise NotImplementedError
