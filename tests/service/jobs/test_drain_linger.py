"""A drain job's linger (the setting `drain_linger`, `Jobs.take`): on an empty ready list it
waits that long for another step, takes a step that comes meanwhile (held for it), and
ends, dropping its lease, when none comes. (The tests' own settings set it to 0: their
worker bursts run in the test's thread, where no step can come during the wait.)"""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest

from service.config import Settings
from service.core.kontor import Kontor
from service.jobs import queue


def test_drain_linger_takes_a_step_that_comes_while_it_waits_and_ends_after_it(settings: Settings) -> None:
    assert Settings().drain_linger == queue.LINGER == 0.05
    k = Kontor(replace(settings, drain_linger=0.6))
    jobs, r = k.jobs, k.jobs.connection
    assert jobs.linger == 0.6
    steps, leases, held = jobs.ready_keys
    later = threading.Timer(0.15, lambda: r.rpush(steps, "g1 3"))
    later.start()
    begun = time.monotonic()
    assert jobs.take("drain-t") == ("g1", 3)  # came during the wait
    waited = time.monotonic() - begun
    later.join()
    assert 0.1 <= waited < 0.6, waited
    assert r.zscore(held, "g1 3 drain-t") is not None and r.zscore(leases, "drain-t") is not None
    begun = time.monotonic()
    assert jobs.take("drain-t", done=("g1", 3)) is None  # nothing came: it ends
    assert time.monotonic() - begun >= 0.55
    assert r.zscore(leases, "drain-t") is None and r.zscore(held, "g1 3 drain-t") is None


def test_drain_linger_0_ends_at_once_and_a_negative_one_is_refused(settings: Settings) -> None:
    jobs = Kontor(replace(settings, drain_linger=0)).jobs
    begun = time.monotonic()
    assert jobs.take("drain-u") is None
    assert time.monotonic() - begun < 0.05
    assert jobs.connection.zscore(jobs.ready_keys[1], "drain-u") is None
    with pytest.raises(ValueError, match="KONTOR_DRAIN_LINGER is -1"):
        replace(settings, drain_linger=-1).check()
