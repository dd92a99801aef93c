"""Orders by email. (To be completed.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.games import Kontor


def process(k: Kontor, mail_id: str) -> str:
    raise NotImplementedError
