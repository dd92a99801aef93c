"""The press aggregate: the sliding-window rate limit of in-game messages, per writer and
game (`service.core.press`). The messages themselves are game events
(`Games.append_events`)."""

from __future__ import annotations

from service.store.base import Base


class Press(Base):
    """Mixin of `Store`: take a slot of a writer's message limit, or give it back."""

    def take_press_slot(self, game: str, writer: int | str, window: float, rate: int, slot: str) -> float | None:
        """Count one message of `writer` in `game` as `slot` (a unique id), atomically and
        on the store's clock (press_rate.lua): None when taken, else the seconds until a
        slot frees up (then nothing was counted)."""
        taken, wait = self._run("press_rate", [self.press_key(game, writer)], [window, rate, slot])
        return None if taken == "1" else float(wait)

    def give_back_press_slot(self, game: str, writer: int | str, slot: str) -> None:
        """Uncount a slot taken for a message that was refused after all."""
        self.r.zrem(self.press_key(game, writer), slot)
