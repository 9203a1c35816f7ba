"""A socket-level guard: while it is on, no connection leaves the machine, whichever client tries.

It patches ``socket.socket.connect``/``connect_ex``/``sendto`` and ``socket.getaddrinfo``, which
every Python client goes through in the end (httpx, httpx2, urllib3/botocore, aiohttp, asyncio,
raw sockets). Loopback addresses (127.0.0.0/8, ::1, ``localhost``) and Unix sockets stay allowed,
so simulators on 127.0.0.1 keep working. A blocked attempt raises
:class:`~loopkit.errors.NetworkBlocked` (an ``OSError``) and is also kept in
:attr:`NetworkGuard.attempts`, so a test fails even when the client swallows the error and retries.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import NetworkBlocked

_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", ""})
_lock = threading.Lock()


def is_loopback(host: Any) -> bool:
    """Whether ``host`` (an address or a name) stays on this machine."""
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    host = str(host).strip("[]").lower()
    if host in _LOCAL_NAMES:
        return True
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


class NetworkGuard:
    """The record of blocked attempts while :func:`block_network` is active."""

    def __init__(self) -> None:
        self.attempts: list[str] = []

    def check(self, family: int, address: Any, what: str) -> None:
        if family == getattr(socket, "AF_UNIX", object()):
            return
        host = address[0] if isinstance(address, tuple) and address else address
        if not is_loopback(host):
            where = f"{host}:{address[1]}" if isinstance(address, tuple) and len(address) > 1 else str(host)
            self.attempts.append(where)
            raise NetworkBlocked(
                f"network access blocked: {what} to {where} (only loopback is allowed while replaying a cassette; "
                "record with --loopkit-record=once/new_episodes/all to reach the real service)"
            )


_active: list[NetworkGuard] = []  # the guards on now, oldest first; the newest one judges
_real: tuple[Any, Any, Any, Any] | None = None  # the socket functions from before the first guard


def _judge(family: int, address: Any, what: str) -> None:
    with _lock:
        guard = _active[-1] if _active else None
    if guard is not None:
        guard.check(family, address, what)


@contextmanager
def block_network() -> Iterator[NetworkGuard]:
    """Refuse every non-loopback connection (and name lookup) for the duration of the block.

    Blocks may nest and may end in any order (a guard left open by an earlier test can end late,
    from a garbage-collected generator or another thread): the socket functions stay patched
    while any guard is on, the newest one judges, and the real functions come back when the last
    one ends.
    """
    global _real
    guard = NetworkGuard()
    with _lock:
        if not _active:
            _real = (socket.socket.connect, socket.socket.connect_ex, socket.socket.sendto, socket.getaddrinfo)
            real_connect, real_connect_ex, real_sendto, real_getaddrinfo = _real

            def connect(self: socket.socket, address: Any) -> Any:
                _judge(self.family, address, "connect")
                return real_connect(self, address)

            def connect_ex(self: socket.socket, address: Any) -> Any:
                _judge(self.family, address, "connect")
                return real_connect_ex(self, address)

            def sendto(self: socket.socket, data: Any, *args: Any) -> Any:
                _judge(self.family, args[-1], "sendto")
                return real_sendto(self, data, *args)

            def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
                _judge(socket.AF_INET, (host, args[0] if args else None), "name lookup")
                return real_getaddrinfo(host, *args, **kwargs)

            socket.socket.connect = connect  # type: ignore[method-assign]
            socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
            socket.socket.sendto = sendto  # type: ignore[method-assign,assignment]
            socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
        _active.append(guard)
    try:
        yield guard
    finally:
        with _lock:
            _active.remove(guard)
            if not _active and _real is not None:
                socket.socket.connect, socket.socket.connect_ex, socket.socket.sendto, socket.getaddrinfo = _real  # type: ignore[method-assign,assignment]
                _real = None
