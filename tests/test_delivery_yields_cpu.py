"""On one machine the senders yield the CPU to the accept path (`herald.cpu_priority`): an operator
sees them at the delivery niceness in `ps -o ni` (and their scheduling group's, where the kernel
groups sessions), and every service a client's request waits on at none."""

from __future__ import annotations

from pathlib import Path

from herald.cli.stack import Stack
from herald.config import Settings

SENDERS = ("webhook-sender", "email-sender")
ACCEPT_PATH = ("gateway", "router", "ledger", "verifier")


def niceness(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[16])


def group_niceness(pid: int) -> int | None:
    """The autogroup's niceness ("/autogroup-N nice K"), None where the kernel has no autogroups."""
    try:
        return int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])
    except (FileNotFoundError, PermissionError):
        return None


def test_the_senders_yield_the_cpu_and_the_accept_path_does_not(stack: Stack) -> None:
    expected = Settings().delivery_cpu_nice
    assert expected > 0
    pids = {name: s.process.pid for name, s in stack.services.items() if s.process is not None}
    for name in SENDERS:
        assert niceness(pids[name]) == expected, f"{name} runs at niceness {niceness(pids[name])}"
        group = group_niceness(pids[name])
        assert group in (None, expected), f"{name}'s scheduling group runs at niceness {group}"
    for name in ACCEPT_PATH:
        assert niceness(pids[name]) == 0, f"{name} runs at niceness {niceness(pids[name])}"
        assert group_niceness(pids[name]) in (None, 0), f"{name}'s scheduling group was lowered"
