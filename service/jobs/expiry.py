"""The lobby's expiry and the listing indexes' repair, run by the sweep
(`service.jobs.sweep`).

A game nobody started is removed `lobby_ttl` seconds after its creation (joining does
not renew it; a started game never expires). `lobby_warning` seconds before, the game is
told once: a public `lobby_closing` event (its page and its stream show it), and its
notices are enqueued: every seat's contact gets a `lobby.closing` mail or webhook at once
(the host has no contact of its own; see docs/operations.md). The candidates come from the
`lobby` listing index (scored by creation time), never from a scan of every game; the
removal itself is one script per game (purge.lua), which re-checks the status and the
time on the store's clock, so a game started or joined a moment before is judged as it
is then; its entries outside the game's slot (the registry, the listing indexes, the
Idempotency-Key records about it) go right after (`Games.forget`), and a removal cut
short in between is finished by the next sweep (its lobby index entry is still there).
"""

from __future__ import annotations

import logging

from service.core.kontor import Kontor, iso

log = logging.getLogger("kontor.sweeper")

#: The registry entries and index entries one sweep checks (`Games.repair_indexes`).
INDEX_REPAIR_BATCH = 500


def expire_lobbies(k: Kontor, now: float) -> tuple[int, int]:
    """Tell the lobby games that expire within `lobby_warning` (once each) and remove
    those whose time is over; (told, removed). A game still to be told is told first,
    so even a game found only after its time (the sweeper was down) was told before it
    goes. The scripts judge on the store's clock; `now` only picks the candidates."""
    ttl, lead = k.settings.lobby_ttl, k.settings.lobby_warning
    due = k.store.lobby_due(now - ttl + lead, k.settings.lobby_sweep_batch)
    told = removed = 0
    for (gid, created), was_told in zip(due, k.store.lobby_told([gid for gid, _ in due]), strict=True):
        if not was_told:
            event = {"type": "lobby_closing", "visible_to": "all", "phase": 0, "closes_at": iso(created + ttl)}
            out = k.store.warn_lobby(gid, ttl, lead, event)
            if out.status == "told":
                told += 1
                log.info("game %s: the lobby closes within %d s; told (event %s)", gid, lead, out.value)
                # Its notices, unless nobody has a contact or the game goes in this pass.
                if created + ttl > now and not k.store.mark_nobody_to_tell(gid):
                    k.jobs.notify(gid, int(out.value))
        if created + ttl <= now and k.store.purge_expired(gid, ttl).status == "expired":
            removed += 1
            log.info("game %s: not started within %d s of its creation; removed", gid, ttl)
    return told, removed


def repair_indexes(k: Kontor, now: float) -> tuple[int, int]:
    """One step of the registry's and the listing indexes' repair (`now`: the store's
    clock); (games put back, vanished entries removed)."""
    added, gone = k.store.repair_indexes(INDEX_REPAIR_BATCH, now)
    for gid in added:
        log.warning("game %s: missing from (or misplaced in) the registry or the listing indexes; repaired", gid)
    for gid in gone:
        log.warning("game %s: registered or listed but gone; taken out", gid)
    return len(added), len(gone)
