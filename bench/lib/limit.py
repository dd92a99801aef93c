"""Every bench's overall time limit (`--time-limit`): a bench that hangs (a dead pool
child, a stuck stack) must end on its own, stop its stack and say so, instead of holding
the machine and whatever waits for it.

At the limit, SIGALRM raises `TimeLimitExceeded` in the main thread: a SystemExit (exit
code 124, as `timeout` uses) that no `except Exception` swallows, so every `finally`
on the way out runs (the stack is stopped) and the interpreter exits non-zero. The
alarm also starts a watchdog thread: if unwinding hangs too (the stack will not stop),
it calls `hard_stop` and ends the process `grace` seconds later. (The watchdog starts
only then, so no process is forked while it runs: the supervisor's children use a
`preexec_fn`, which is unsafe once threads run.)"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

EXIT_CODE = 124


class TimeLimitExceeded(SystemExit):
    pass


def add_argument(parser: Any, default: float) -> None:
    """The `--time-limit` option, the same in every bench."""
    parser.add_argument("--time-limit", type=float, default=default, metavar="SECONDS",
                        help=f"stop (and exit {EXIT_CODE}) after this many seconds in all (default {default:g})")


def arm(seconds: float, bench: str, *, hard_stop: Callable[[], None] | None = None, grace: float = 30.0) -> None:
    """From now on, `bench` has `seconds` seconds in all (main thread only). `hard_stop`
    is the watchdog's last resort (kill the stack's processes at once)."""
    if seconds <= 0:
        raise ValueError("--time-limit must be positive")

    def expire(signum: int, frame: Any) -> None:
        print(f"{bench}: time limit of {seconds:g} s reached (--time-limit); stopping", file=sys.stderr, flush=True)
        timer = threading.Timer(grace, watchdog)
        timer.daemon = True
        timer.start()
        raise TimeLimitExceeded(EXIT_CODE)

    def watchdog() -> None:
        print(f"{bench}: still running {grace:g} s after the time limit; killing it", file=sys.stderr, flush=True)
        try:
            if hard_stop is not None:
                hard_stop()
        finally:
            os._exit(EXIT_CODE)

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
