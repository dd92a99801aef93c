"""The streams aggregate: leases of open live streams, counted per client address and
per game across every web process, for the concurrent stream caps (`service.core.live`).
A lease ends unless renewed, so the streams of a killed process stop counting by themselves.

Each cap is a ZSET of its own (the game's `streams`, under the game's hash tag, and the
address's `streams:A`), so they may sit in different cluster slots: every script call
(stream_lease.lua) touches one of them only. Taking a stream's leases is one call per
cap, in turn; when a later cap refuses, the leases taken before it are given back.
"""

from __future__ import annotations

from service.store.base import Base, run_batch


class Streams(Base):
    """Mixin of `Store`: take, renew and give back the leases of open live streams."""

    def stream_address_key(self, address: str) -> str:
        """The leases of the open streams of one client address (one global key each)."""
        return f"{self.prefix}:streams:{address}"

    def stream_game_key(self, game: str) -> str:
        """The leases of the open streams of one game (the game's hash tag)."""
        return self.key(game, "streams")

    def take_stream_leases(self, member: str, lease: float, caps: list[tuple[str, int]]) -> str | None:
        """Take a lease named `member` on each of `caps` (key, cap), in that order, one
        script call each (each key its own slot): None when every one was taken, else the
        key whose cap was reached (the leases taken before it are given back: none is held)."""
        taken: list[str] = []
        for key, cap in caps:
            if not int(self.scripts["stream_lease"](keys=[key], args=[member, lease, max(cap, 1)])):
                if taken:
                    self.give_back_stream_leases(member, taken)
                return key
            taken.append(key)
        return None

    def renew_stream_leases(self, leases: list[tuple[str, str]], lease: float) -> None:
        """Extend each (key, member) lease by `lease` seconds from now (one round trip on
        one server; one per node on a cluster)."""
        if leases:
            run_batch(self.r, self.scripts["stream_lease"], [([key], [member, lease, 0]) for key, member in leases])

    def give_back_stream_leases(self, member: str, keys: list[str]) -> None:
        """Drop the lease `member` from each of `keys` (a stream that closed)."""
        pipe = self.r.pipeline(transaction=False)
        for key in keys:
            pipe.zrem(key, member)
        pipe.execute()
