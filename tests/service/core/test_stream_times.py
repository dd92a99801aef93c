"""The time stamps streams show (`service.core.clock.iso`): a stored stamp (text) is made
once and kept, and always reads as the one made from it afresh."""

from __future__ import annotations

from datetime import UTC, datetime

from service.core import clock


def fresh(ts: float | str) -> str:
    return datetime.fromtimestamp(float(ts), UTC).isoformat(timespec="milliseconds")


def test_stream_event_times_read_as_made_afresh() -> None:
    stamps = ["1765000000.123456", "1765000000.9995", "0", "1765000000", "1765000000.0004999", "17650e5"]
    for _ in range(2):
        for ts in stamps:
            assert clock.iso(ts) == fresh(ts), ts
        for x in (1765000000.5, 0.0, 12):
            assert clock.iso(x) == fresh(x)
    assert clock.iso(None) is None and clock.iso("") is None
    assert all(clock._SHOWN[ts] == fresh(ts) for ts in stamps)


def test_stream_event_times_kept_are_bounded() -> None:
    for i in range(clock.SHOWN_KEPT + 10):
        assert clock.iso(f"1765000000.{i:06d}") == fresh(f"1765000000.{i:06d}")
    assert len(clock._SHOWN) <= clock.SHOWN_KEPT
