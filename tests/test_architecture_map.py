"""docs/architecture.md opens with a map of one webhook's path: each step names files and the
functions in them. This keeps it true: every file named exists, and every function or class
named is defined in one of its step's files."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = [*sorted((ROOT / "services").glob("*/")), ROOT / "src"]


def _rows() -> list[tuple[str, list[str], list[str]]]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("## Map: one webhook's path, file by file", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].isdigit():
            rows.append((cells[0], re.findall(r"`([^`]+)`", cells[2]), re.findall(r"`([^`]+)`", cells[3])))
    return rows


def _resolve(name: str, directory: Path | None) -> Path:
    """`herald_gateway/access.py` under its service (or src/), or `priority.py`, `store/jobs.py`
    beside the step's first file."""
    if directory is not None and ("/" not in name or (directory / name).exists()):
        return directory / name
    for base in PACKAGES:
        if (base / name).exists():
            return base / name
    raise AssertionError(f"the map names {name}, which does not exist")


def test_the_map_names_files_and_functions_that_exist() -> None:
    rows = _rows()
    assert len(rows) >= 10
    for number, files, functions in rows:
        paths: list[Path] = []
        for name in files:
            paths.append(_resolve(name, paths[0].parent if paths else None))
        source = "\n".join(path.read_text() for path in paths)
        for written in functions:
            for name in re.split(r"\s*(?:→|,|/)\s*", written):
                if not name or not re.fullmatch(r"[A-Za-z_][\w.]*", name):
                    continue
                for part in name.split("."):
                    # A def, a class, a module-level name, or a class attribute a factory builds
                    # (`AdvanceDeliveries = advance_rpc(...)`).
                    defined = rf"(?:def|class) {re.escape(part)}\b|^{re.escape(part)}\b|^\s+{re.escape(part)} = "
                    assert re.search(defined, source, re.M), f"step {number}: {part} is not defined in {files}"
