"""Under gevent (the web workers), redis-py's readiness check of a pooled connection is a
plain non-blocking poll for a zero timeout, and gevent's cooperative poll otherwise
(`service.store.base.quick_readiness_checks`, run in gunicorn's `post_fork`)."""

from __future__ import annotations

import select
import socket
import subprocess
import sys
import textwrap

from service.store.base import _ReadinessPoll


def test_the_shim_poll_tells_readable_from_idle_with_either_poller() -> None:
    a, b = socket.socketpair()
    try:
        for timeout in (0, 10):
            p = _ReadinessPoll(select.poll, select.poll)
            p.register(a, select.POLLIN)
            assert p.poll(timeout) == []
        b.send(b"x")
        for timeout in (0, 10):
            p = _ReadinessPoll(select.poll, select.poll)
            p.register(a, select.POLLIN)
            assert [fd for fd, _ in p.poll(timeout)] == [a.fileno()]
    finally:
        a.close()
        b.close()


def test_under_gevent_a_zero_timeout_skips_the_hub_and_a_wait_still_yields() -> None:
    code = textwrap.dedent("""
        from gevent import monkey; monkey.patch_all()
        import gevent, select, socket
        from service.store.base import quick_readiness_checks
        from redis._parsers import hiredis
        quick_readiness_checks(); quick_readiness_checks()  # idempotent
        native = monkey.get_original("select", "poll")
        a, b = socket.socketpair()
        assert hiredis._socket_can_read(a, 0) is False
        b.send(b"x")
        assert hiredis._socket_can_read(a, 0) is True
        assert hiredis._socket_is_closed(a) is False
        c, d = socket.socketpair()
        ticks = []
        g = gevent.spawn(lambda: ticks.append(hiredis._socket_can_read(c, 0.2)))
        gevent.sleep(0.05)
        ticks.append("other greenlet ran")  # the 0.2 s wait did not block the process
        g.join()
        assert ticks == ["other greenlet ran", False], ticks
        p = hiredis.select.poll()
        assert p._native is native and p._cooperative is select.poll
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_under_gevent_sendall_sends_small_data_at_once_and_large_or_blocked_data_whole() -> None:
    """`quick_sendall` (gunicorn's `post_worker_init`): a small `bytes` goes in one send
    without the buffer-size query; data larger than the send buffer, data sent while the
    peer reads slowly, and other types still arrive whole and in order; TLS sockets keep
    gevent's own `sendall`."""
    code = textwrap.dedent("""
        from gevent import monkey; monkey.patch_all()
        import gevent, socket
        from gevent import socket as gsocket, ssl as gssl
        from service.http.gunicorn_conf import quick_sendall
        real = gsocket.socket.sendall
        quick_sendall(); quick_sendall()  # idempotent
        assert gsocket.socket.sendall is not real and gsocket.socket.sendall.quick
        assert gssl.SSLSocket.sendall is not gsocket.socket.sendall
        l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen()
        a = socket.create_connection(l.getsockname()); b, _ = l.accept()
        asked = []
        getsockopt = gsocket.socket.getsockopt
        gsocket.socket.getsockopt = lambda self, *x: asked.append(x) or getsockopt(self, *x)
        a.sendall(b"hello")
        assert b.recv(100) == b"hello" and asked == []
        big = bytes(range(256)) * 40000  # 10 MB: more than any send buffer
        got = bytearray()
        def read():
            while len(got) < 2 * len(big) + 3:
                gevent.sleep(0.001)  # a slow reader: the sender must wait for room
                got.extend(b.recv(1 << 16))
        r = gevent.spawn(read)
        a.sendall(big)
        a.sendall(bytearray(b"abc"))
        a.sendall(memoryview(big))
        r.join(30)
        assert bytes(got) == big + b"abc" + big
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
