"""The senders' share of a machine they share with the accept path.

Accepting a job is what a client waits on (its request holds a connection until the row is
committed); delivering it is asynchronous by contract. On one machine the two compete for the
same cores, and when the cores are saturated (a burst) every delivery taken at the same time
slows every request being accepted. So a sender lowers its own CPU priority at start
(`Settings.delivery_cpu_nice`): with idle cores nothing changes; under contention its own work
waits for the accept path's. That is only part of a delivery's cost: the ledger's records,
PostgreSQL, nats-server and the receiver do the rest at their own priority; deliveries are
never held back in time for the accept path's sake.

Linux schedules a session's processes as one group (autogroup, on by default in most
distributions), and a process's niceness only weighs inside its group: the services started
by `herald up` each lead their own session, so their group's niceness is what counts and is set
too, but only by a process that leads its session (otherwise the group is its shell's, whose
other processes must not be slowed). Under Kubernetes each pod's CPU requests decide instead.
"""

from __future__ import annotations

import errno
import logging
import os
import time
from pathlib import Path

log = logging.getLogger("herald.cpu_priority")

AUTOGROUP = Path("/proc/self/autogroup")
# The kernel takes one autogroup change per tenth of a second, machine-wide.
AUTOGROUP_RETRIES = 20
AUTOGROUP_RETRY_S = 0.11


def lower_cpu_priority(niceness: int) -> None:
    """Raises this process's niceness to `niceness` (never lowers it) and, when it leads its
    session, its scheduling group's."""
    if niceness <= os.getpriority(os.PRIO_PROCESS, 0):
        return
    os.setpriority(os.PRIO_PROCESS, 0, niceness)
    grouped = os.getsid(0) == os.getpid() and _set_autogroup(niceness)
    log.info("cpu priority lowered", extra={"nice": niceness, "autogroup": grouped})


def _set_autogroup(niceness: int) -> bool:
    for _ in range(AUTOGROUP_RETRIES):
        try:
            AUTOGROUP.write_text(str(niceness))
            return True
        except OSError as error:
            if error.errno != errno.EAGAIN:
                return False  # no autogroup in this kernel, or not allowed: the niceness alone
            time.sleep(AUTOGROUP_RETRY_S)
    return False
