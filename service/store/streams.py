"""The streams aggregate: leases of open live streams, counted per client address and
per game across every web process, for the concurrent stream caps (`service.core.live`).
A lease ends unless renewed, so the streams of a killed process stop counting by themselves."""

from __future__ import annotations

from service.store.base import Base


class Streams(Base):
    """Mixin of `Store`: take, renew and give back the leases of open live streams."""

    def stream_address_key(self, address: str) -> str:
        """The leases of the open streams of one client address (one global key each)."""
        return f"{self.prefix}:streams:{address}"

    def stream_game_key(self, game: str) -> str:
        """The leases of the open streams of one game (the game's hash tag)."""
        return self.key(game, "streams")

    def take_stream_leases(self, member: str, lease: float, caps: list[tuple[str, int]]) -> str | None:
        """Take a lease named `member` on each of `caps` (key, cap), in one round trip: None
        when every one was taken, else the key whose cap was reached (then none is held)."""
        pipe = self.r.pipeline(transaction=False)
        for key, cap in caps:
            self.scripts["stream_lease"](keys=[key], args=[member, lease, max(cap, 1)], client=pipe)
        got = pipe.execute()
        refused = [key for (key, _), ok in zip(caps, got, strict=True) if not int(ok)]
        if refused:
            self.give_back_stream_leases(member, [key for key, _ in caps])
            return refused[0]
        return None

    def renew_stream_leases(self, leases: list[tuple[str, str]], lease: float) -> None:
        """Extend each (key, member) lease by `lease` seconds from now (one round trip)."""
        if not leases:
            return
        pipe = self.r.pipeline(transaction=False)
        for key, member in leases:
            self.scripts["stream_lease"](keys=[key], args=[member, lease, 0], client=pipe)
        pipe.execute()

    def give_back_stream_leases(self, member: str, keys: list[str]) -> None:
        """Drop the lease `member` from each of `keys` (a stream that closed)."""
        pipe = self.r.pipeline(transaction=False)
        for key in keys:
            pipe.zrem(key, member)
        pipe.execute()
