"""The figures' arithmetic and layout: the metric list, medians of the clean runs, the tables.

Shared by every report (webhooks, senders, email), so that each side's figures are reduced and
printed the same way and the ratios compare like with like.
"""

from __future__ import annotations

import statistics
from typing import Any

from harness.config import env
from harness.cpu import contended

METRICS = [
    # key, label, digits, better ("up" = higher is better)
    ("accept_rps", "accept req/s", 0, "up"),
    ("accept_p50_ms", "accept p50 ms", 1, "down"),
    ("accept_p99_ms", "accept p99 ms", 1, "down"),
    ("e2e_jobs_per_s", "delivered jobs/s (e2e)", 0, "up"),
    ("e2e_s", "e2e s (first 202 -> Nth delivery)", 2, "down"),
    ("drain_after_last_accept_s", "drain after last 202 s", 2, "down"),
    ("a2d_p50_ms", "accept-to-delivery p50 ms", 0, "down"),
    ("a2d_p99_ms", "accept-to-delivery p99 ms", 0, "down"),
    ("cpu_s_per_1000_delivered_total", "CPU s / 1000 delivered (all processes, sampler)", 2, "down"),
    ("cpu_s_per_1000_delivered_total_incl_exited", "  + PostgreSQL backends that exited between samples", 2, "down"),
    ("peak_rss_mb", "peak RSS MB (sum)", 0, "down"),
    ("peak_pss_mb", "peak PSS MB (sum)", 0, "down"),
    ("foreign_cpu_s", "other load on the machine, CPU s", 1, "down"),
    ("foreign_cpu_s_excl_missed_postgres", "  without the PostgreSQL CPU the sampler missed", 1, "down"),
]


def used_runs(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """As medians.py: contended runs are left out when clean ones exist (ALL=1 keeps them)."""
    if env("ALL", "0") not in ("0", ""):
        return records
    return [r for r in records if not contended(r)] or records


def median(records: list[dict[str, Any]], key: str) -> float | None:
    """The median of `key` over the records that have it (None: none has)."""
    values = [r[key] for r in records if r.get(key) is not None]
    return statistics.median(values) if values else None


def percentile(ordered: list[float], p: float) -> float | None:
    """The p-th percentile of sorted values, by rank (no interpolation); None for no values."""
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def rounded(value: float | None, digits: int = 1) -> float | None:
    """`round`, passing None through (a figure a run could not measure)."""
    return None if value is None else round(value, digits)


def fmt(value: float | None, digits: int) -> str:
    """A table cell: thousands separated, NA for a missing figure."""
    return "NA" if value is None else f"{value:,.{digits}f}"


def num(value: Any, digits: int = 0) -> str:
    """A cell of the open loop's tables: thousands separated, '-' when missing."""
    return "-" if value is None else f"{value:,.{digits}f}"


def table(cols: list[str], rows: list[list[str]]) -> None:
    """Print left-aligned columns as wide as their widest cell."""
    widths = [max(len(str(x)) for x in col) for col in zip(cols, *rows, strict=False)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=False)))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=False)))
