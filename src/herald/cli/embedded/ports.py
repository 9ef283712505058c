"""Ports for the embedded servers: chosen below the kernel's ephemeral range."""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

HOST = "127.0.0.1"
# Tries at binding a port that another process might grab between free_port() and the bind.
PORT_ATTEMPTS = 3


def free_port() -> int:
    """A port nobody listens on, for servers that cannot pick one themselves.

    The port comes from below the kernel's ephemeral range: a port that bind(0)
    hands out is released before the server binds it, and in between any
    outgoing connection on the machine may take it as its local port (seen in
    CI: a router's gRPC port taken by a client socket). Ports under that range
    are never given to outgoing connections, so only another deliberate chooser
    can collide, and this process never hands the same port out twice.
    """
    low, high = port_range()
    for _ in range(200):
        port = _random.randrange(low, high)
        if port in _handed_out or not _bindable(port):
            continue
        _handed_out.add(port)
        return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        chosen: int = sock.getsockname()[1]
        return chosen


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
        return True


def _ports_below_ephemeral() -> tuple[int, int]:
    """[low, high) under the first ephemeral port (Linux's default starts at 32768)."""
    try:
        ephemeral_low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral_low = 32768
    high = max(ephemeral_low, 12000)
    return (max(10000, high - 20000), high)


_PORTS_BELOW_EPHEMERAL = _ports_below_ephemeral()
# Narrows the range to "low-high" (inside it): processes that choose ports side by side (the
# test suite's parallel lanes) take disjoint ranges, so one cannot hand out a port the other
# handed out and has not bound yet (seen in CI: a router's metrics port).
PORT_RANGE_ENV = "HERALD_PORT_RANGE"


def port_range() -> tuple[int, int]:
    """[low, high) free_port() chooses from: below the ephemeral range, narrowed by PORT_RANGE_ENV."""
    low, high = _PORTS_BELOW_EPHEMERAL
    narrowed = os.environ.get(PORT_RANGE_ENV, "")
    if narrowed:
        first, _, last = narrowed.partition("-")
        low, high = max(low, int(first)), min(high, int(last))
    return low, high


def lane_range(lane: int, lanes: int) -> str:
    """The PORT_RANGE_ENV value of lane `lane` of `lanes` (0-based): a disjoint slice."""
    low, high = _PORTS_BELOW_EPHEMERAL
    width = (high - low) // lanes
    return f"{low + lane * width}-{low + (lane + 1) * width}"


_handed_out: set[int] = set()
_random = random.SystemRandom()
