"""What the stacks a failed test used logged at warning and above while it ran, added to its
report: a failure that does not reproduce alone (a CI run's) then says what the services saw."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from herald.cli.stack import Stack

MOST_LINES = 60
_LEVELS = ('"level":"warning"', '"level":"error"', '"level":"critical"')


def logged_since(log_dir: Path, since: float) -> list[str]:
    """The warning, error and critical entries of every service's log from `since` (epoch
    seconds) on, oldest first, each as `time service: message {fields}`, the last MOST_LINES."""
    entries: list[tuple[str, str]] = []
    for path in sorted(log_dir.glob("*.log")):
        for line in path.read_text(errors="replace").splitlines():
            if not any(level in line for level in _LEVELS):
                continue
            try:
                entry = json.loads(line)
                at = datetime.strptime(entry["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
            except (ValueError, KeyError):
                continue
            if at.timestamp() < since:
                continue
            fields = {k: v for k, v in entry.items() if k not in {"ts", "level", "service", "logger", "msg", "exc"}}
            exc = str(entry.get("exc") or "").strip().splitlines()
            tail = f" [{exc[-1]}]" if exc else ""
            said = f"{path.stem} {entry['level']}: {entry.get('msg')} {fields}{tail}"
            entries.append((entry["ts"], f"{entry['ts']} {said}"))
    entries.sort()
    return [text for _, text in entries[-MOST_LINES:]]


def sections_for(stacks: list[Stack], since: float) -> list[tuple[str, str]]:
    return [
        (f"{stack.data_dir.name}: logged at warning and above during the test", "\n".join(lines))
        for stack in stacks
        if (lines := logged_since(stack.data_dir / "logs", since))
    ]
