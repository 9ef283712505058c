"""The README's shell blocks, run as a newcomer runs them, so a README change that breaks a step
fails the suite.

How, and what is not literally what a newcomer does (the honest differences):

- The blocks are read from README.md at test time: every ```sh block, verbatim, in order.
- The first one (`make run` / `make test`) is not run: `make test` is this suite, and the quick
  start starts the stack itself, with the command `make run` runs (checked: asked of make itself,
  `make -n run`).
- The other blocks, the quick start, run in ONE bash reading them one after the other (`-e -o
  pipefail`: a failing command fails the test, where a person would stop and read), with its
  output on a pseudo-terminal (what prints, and when, is what a person sees), from a scratch
  directory whose `.venv` is this checkout's, so `.herald` there is fresh and a developer's own
  `.herald` is left alone; its `make env` is skipped (that `.venv` is built already). The shell is
  given the suite's NATS and a PostgreSQL database of its own (DATABASE_URL / NATS_URL, as a
  newcomer may set them too) and a bus prefix of its own (HERALD_BUS_PREFIX), so nothing the stack
  does reaches the other tests' stack. After each block the test waits for what its comments
  promise will print (`# and the receiver prints: ...`, `…` standing for whatever varies) before
  the next one, as a person reads before going on. The last block stops the stack; if a block
  fails first, the test stops it (the pid is in the data folder's lock file).
- The README names its ports (gateway 8080 and 50051, receiver 9000, SMTP server 2525); they must
  be free on the machine, as on a newcomer's. The test says so if one is not, and changes nothing.
- Each Python snippet (`python3 -c '...'`) is also parsed as Python 3.11 (the oldest the README
  promises); the blocks themselves run on whatever `python3` is first on PATH.
"""

from __future__ import annotations

import ast
import os
import pty
import re
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.infra import separate_database

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
SHELLS = ("sh", "bash", "shell")
PYTHON_SNIPPET = re.compile(r"python3? -c '([^']*)'")
PROMISE = re.compile(r"#\s*and the [\w ]+ prints: (.*)$", re.MULTILINE)
README_PORTS = {"gateway HTTP": 8080, "gateway gRPC": 50051, "receiver": 9000, "SMTP server": 2525}
BLOCK_TIMEOUT_S = 120.0
PROMISE_TIMEOUT_S = 90.0


def shell_blocks() -> list[str]:
    return [body for language, body in FENCE.findall(README.read_text()) if language in SHELLS]


def test_every_python_snippet_parses_as_python_3_11() -> None:
    snippets = [s for block in shell_blocks() for s in PYTHON_SNIPPET.findall(block)]
    assert len(snippets) >= 2, "the README's Python snippets were not found"
    for snippet in snippets:
        ast.parse(snippet, feature_version=(3, 11))
        compile(snippet, "<README snippet>", "exec")
    # The check catches the line the README once had (a backslash inside an f-string's expression), on
    # whichever Python runs the suite (3.12 and 3.13 refuse that line as well).
    with pytest.raises(SyntaxError):
        ast.parse(r'print(f"export KEY={d[\"api_key\"]}")', feature_version=(3, 11))


class Terminal:
    """One bash reading blocks from a pipe, its output on a pseudo-terminal."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            ["bash", "-e", "-o", "pipefail", "-s"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
        os.close(slave)
        self.output = ""

    def read(self, timeout: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if ready:
            try:
                self.output += os.read(self.master, 65536).decode(errors="replace").replace("\r\n", "\n")
            except OSError:  # every writer is gone
                time.sleep(timeout)

    def run(self, index: int, block: str) -> str:
        """Runs one block; returns what the terminal showed meanwhile."""
        start = len(self.output)
        done = f"@@ block {index} done"
        assert self.process.stdin is not None
        self.process.stdin.write(f"{block}\necho '{done}'\n".encode())
        self.process.stdin.flush()
        deadline = time.monotonic() + BLOCK_TIMEOUT_S
        while done not in self.output[start:]:
            assert self.process.poll() is None, f"block {index} failed:\n{block}\n--- terminal:\n{self.output[start:]}"
            assert time.monotonic() < deadline, f"block {index} did not finish:\n{self.output[start:]}"
            self.read(0.2)
        return self.output[start:]

    def wait_for(self, fragments: list[str], since: int, what: str) -> None:
        deadline = time.monotonic() + PROMISE_TIMEOUT_S
        while not _in_order(self.output[since:], fragments):
            assert time.monotonic() < deadline, f"never printed: {what}\n--- terminal:\n{self.output[since:]}"
            self.read(0.2)

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=60)
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # anything a failed block left behind
        except ProcessLookupError:
            pass
        os.close(self.master)
        return code


def _in_order(text: str, fragments: list[str]) -> bool:
    position = 0
    for fragment in fragments:
        found = text.find(fragment, position)
        if found < 0:
            return False
        position = found + len(fragment)
    return True


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _make_run_command() -> str:
    shown = subprocess.run(["make", "-s", "-n", "run"], cwd=ROOT, capture_output=True, text=True, check=True)
    command = shown.stdout.strip().splitlines()[-1].strip()
    assert command.split()[:2] == [".venv/bin/herald", "up"], f"`make run` runs {command!r}"
    return command


@pytest.fixture
def scratch(tmp_path: Path, infra: dict[str, str]) -> Iterator[tuple[Path, dict[str, str]]]:
    """A scratch checkout with this one's `.venv`, and the environment its shell is given."""
    # Another process may hold one for a moment (50051 is inside the ephemeral range other stacks' free
    # ports come from): wait a little before saying so.
    deadline = time.monotonic() + 60
    while busy := [f"{name} {port}" for name, port in README_PORTS.items() if _listening(port)]:
        assert time.monotonic() < deadline, f"the README's ports are in use on this machine: {', '.join(busy)}"
        time.sleep(0.5)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".venv").symlink_to(sys.prefix)
    with separate_database(infra["database_url"], "readme") as database_url:
        env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "NATS_URL": infra["nats_url"],
            "HERALD_BUS_PREFIX": f"{infra['bus_prefix']}readme",
        }
        try:
            yield checkout, env
        finally:
            _stop_stack(checkout / ".herald")


def _stop_stack(data_dir: Path) -> None:
    """What a failed block left running: the stack named in the data folder's lock, stopped as Ctrl-C would."""
    try:
        pid = int((data_dir / "herald.lock").read_text().strip())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)


def test_the_readme_runs_as_written(scratch: tuple[Path, dict[str, str]]) -> None:
    checkout, env = scratch
    blocks = shell_blocks()
    runs_make_run = re.compile(r"^make run\b", re.MULTILINE)
    assert runs_make_run.search(blocks[0]) and not any(runs_make_run.search(b) for b in blocks[1:])
    start = blocks[1]
    assert f"{_make_run_command()} > " in start, "the quick start starts the stack as `make run` does"
    terminal = Terminal(checkout, env)
    try:
        for index, block in enumerate(blocks[1:], start=1):
            since = len(terminal.output)
            terminal.run(index, block.replace("\nmake env\n", "\n: make env, built already\n"))
            for promise in PROMISE.findall(block):
                fragments = [f.strip() for f in promise.split("…") if f.strip()]
                terminal.wait_for(fragments, since, promise)
        # The last block stopped what the others started (a killed process takes a moment to let go of its port).
        deadline = time.monotonic() + 30
        while still := [p for p in README_PORTS.values() if _listening(p)]:
            assert time.monotonic() < deadline, f"still listening after the last block: {still}"
            time.sleep(0.2)
    finally:
        # A failed block leaves the stack up: stopped through its supervisor first, which stops
        # its services (each in a session of its own); killing the shell's group would orphan them.
        _stop_stack(checkout / ".herald")
        code = terminal.close()
    assert code == 0, terminal.output
    # Every delivery was shown: the webhook's and the fan-out's, each read back delivered.
    assert terminal.output.count('"status":"delivered"') >= 2, terminal.output
