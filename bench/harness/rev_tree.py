"""REV's child process onto REV's tree, before anything imports Herald.

Standard library only (and `config`, which is too): it runs first in bench/run.py, and whatever
imports Herald must come after it, so that the child imports REV's Herald, not the work tree's.
"""

# A harness: it runs git and tar by name, as a developer would.
# ruff: noqa: S607

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from harness.config import DEFAULT_TMP, ROOT


def use_revision() -> None:
    """The base commit's run (`--one-run`, started by the main process when REV is set): run the
    services (and this harness's imports of herald) from that commit's tree, exported with
    `git archive` (read-only on the repository) under BENCH_TMP, by putting it first on PYTHONPATH
    and re-executing. The driver stays the work tree's bench/run.py and this package, so both sides
    are driven and measured alike. The venv must hold that commit's dependencies (a later lock only
    adds packages)."""
    rev = os.environ.get("BENCH_BASE_REV", "")
    if not rev or os.environ.get("BENCH_REV_SHA"):
        return
    git = ["git", "--no-optional-locks", "-C", str(ROOT)]
    sha = subprocess.run(
        [*git, "rev-parse", "--verify", f"{rev}^{{commit}}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    target = Path(os.environ.get("BENCH_TMP") or DEFAULT_TMP) / f"src-{sha[:12]}"
    if not target.exists():
        partial = target.with_name(target.name + f".part{os.getpid()}")
        partial.mkdir(parents=True)
        archive = subprocess.run(
            [*git, "archive", "--format=tar", sha, "src", "services"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(partial)], input=archive.stdout, check=True)
        partial.rename(target)
    paths = [target / "src", *sorted(p for p in (target / "services").iterdir() if p.is_dir())]
    os.environ["PYTHONPATH"] = os.pathsep.join(map(str, paths))
    os.environ["BENCH_REV_SHA"] = sha
    os.execv(sys.executable, [sys.executable, *sys.argv])  # noqa: S606
