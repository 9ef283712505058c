"""Reading the services' own logs (JSON lines, one file per service): which errors they
logged, grouped by where in Herald's code they were raised."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

_RAISED = re.compile(r"^([\w.]*(?:Error|Exception|Exit|Timeout|Cancelled)\w*)\b", re.MULTILINE)
_FRAME = re.compile(r'File "[^"]*/((?:services/[^/]+/)?(?:herald_\w+|src/herald)/[^"]+)", line \d+, in (\w+)')


def error_sites(log_dir: Path) -> Counter[tuple[str, str, str]]:
    """(service, innermost Herald frame, exception) -> how many error-level entries with a traceback."""
    sites: Counter[tuple[str, str, str]] = Counter()
    for path in sorted(log_dir.glob("*.log")):
        service = path.stem
        for line in path.read_text(errors="replace").splitlines():
            if '"level":"error"' not in line and '"level":"critical"' not in line:
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            trace = str(entry.get("exc") or "")
            if not trace:
                continue
            frames = _FRAME.findall(trace)
            if frames:
                path, function = frames[-1]
                where = f"{path.split('/', 2)[-1] if path.startswith('services/') else path} in {function}"
            else:
                where = "(no Herald frame)"
            raised = [m.group(1) for m in _RAISED.finditer(trace)]
            sites[(service, where, raised[-1] if raised else "?")] += 1
    return sites
