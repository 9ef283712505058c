"""CPU accounting per process: per 1,000 delivered jobs, the PostgreSQL CPU the sampler misses,
and whether other load on the machine spoiled a run.

The peers' sampler credits a label only with processes it has seen in one of its samples, so
PostgreSQL backends that start and exit between two samples (Herald's ledger pool churns) would
count as other load; the exact cluster figure corrects both the sums and the `contended` flag.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

CLK_TCK = os.sysconf("SC_CLK_TCK")


def contended_cores() -> float:
    """Other load (cores on average over the window) above which a run counts as contended."""
    return float(os.environ.get("CONTENDED_CORES", "0.3"))


def tree_cpu_ticks(root: int) -> int:
    """CPU ticks of a process and its direct children, including children that already exited and
    were reaped (the parent's cutime/cstime). PostgreSQL's backends are the postmaster's children,
    so the difference of two readings is all the CPU the cluster used in between, also by backends
    that lived between two of the sampler's 0.5 s samples (which the sampler cannot see)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        fields = raw[raw.rindex(b")") + 2 :].split()
        if int(entry) == root:
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        elif int(fields[1]) == root:
            total += sum(int(x) for x in fields[11:15])
    return total


def per_1000_delivered(cpu_s: dict[str, float], delivered: int) -> dict[str, float]:
    """CPU seconds per label scaled to 1,000 delivered jobs (the figure every side is compared by)."""
    return {k: round(v * 1000 / delivered, 3) for k, v in cpu_s.items()}


def exact_postgres_fields(record: dict[str, Any], pg_exact_s: float | None, delivered: int) -> dict[str, Any]:
    """The record's corrections from the exact PostgreSQL CPU (None: no private cluster to read).

    summarize.py counts the CPU the sampler missed as other load on the machine; these fields say
    how much that was, and what the foreign CPU, the contended flag and the sum are without it."""
    missed = max(0.0, pg_exact_s - record["cpu_s"].get("postgres", 0.0)) if pg_exact_s is not None else 0.0
    return {
        "postgres_cpu_s_exact": round(pg_exact_s, 2) if pg_exact_s is not None else None,
        "postgres_cpu_s_missed_by_sampler": round(missed, 2),
        "foreign_cpu_s_excl_missed_postgres": round(record["foreign_cpu_s"] - missed, 2),
        "contended_excl_missed_postgres": (record["foreign_cpu_s"] - missed) / max(record["window_s"], 0.001)
        > contended_cores(),
        "cpu_s_per_1000_delivered_total_incl_exited": round((record["cpu_s_peer_total"] + missed) * 1000 / delivered, 3)
        if pg_exact_s is not None
        else None,
    }


def contended(record: dict[str, Any]) -> bool:
    """summarize.py's flag; for Herald without the PostgreSQL CPU the sampler missed (see herald_run)."""
    missed = record.get("postgres_cpu_s_missed_by_sampler")
    if missed is None:
        return bool(record.get("contended"))
    return bool((record["foreign_cpu_s"] - missed) / max(record["window_s"], 0.001) > contended_cores())
