"""Known defects of the fault test (test_zz_faults_under_load.py): violations found under load and not
fixed yet, and how the audit's problems are put down to them on the evidence of the services' logs.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class KnownDefect:
    """A violation the fault test has found and reported, not fixed yet. A problem line is put down to it only
    with its evidence: the services' own logs show the cause (`site`), or the line names it exactly. The
    test then ends as xfail, naming it, never as a pass; any other problem fails it."""

    name: str
    explains: Callable[[str], bool]
    # (service, the innermost Herald frame the log must show it failing in); None: the problem says it all
    site: tuple[str, str] | None


KNOWN_DEFECTS = [
    KnownDefect(
        "gateway answers 500 when storing an idempotent response fails (ledger or PostgreSQL going away) "
        "after the job was created: the client sees 500, its retry meets 409 until the claim expires (60 s)",
        lambda problem: ": HTTP 500 internal at " in problem,
        ("gateway", "herald_gateway/idempotency.py"),
    ),
]


def classify(
    problems: list[str], sites: Counter[tuple[str, str, str]]
) -> tuple[list[str], dict[KnownDefect, list[str]]]:
    """Puts problems down to known defects, each only as many times as its evidence allows: a defect with a
    log site explains at most as many problems as that service logged failures there."""
    budget = {
        defect: sum(
            n for (s, w, _), n in sites.items() if defect.site and s == defect.site[0] and w.startswith(defect.site[1])
        )
        for defect in KNOWN_DEFECTS
    }
    unexplained: list[str] = []
    explained: dict[KnownDefect, list[str]] = defaultdict(list)
    for problem in problems:
        for defect in KNOWN_DEFECTS:
            if defect.explains(problem) and (defect.site is None or budget[defect] > 0):
                budget[defect] -= 1
                explained[defect].append(problem)
                break
        else:
            unexplained.append(problem)
    return unexplained, dict(explained)
