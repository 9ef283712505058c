"""Summarize py-spy raw (collapsed) profiles: where each service spends its CPU.

Usage: python bench/profile_top.py DIR [TOP]
Reads DIR/profile-<service>.txt (py-spy `record --format raw`: one `frame;frame;... count` line per
distinct stack, frames as `function (file:line)`), writes DIR/profile-top.txt and prints it. Per
service: the samples; self time by package (the leaf frame's package: where the CPU actually goes);
the functions with the most self time; and the most inclusive time below the event loop (a
function anywhere on the stack under `Runner.run`, counted once per stack; the process's start-up
frames above it are on every stack and say nothing).

Self time in `Runner.run (asyncio/runners.py)` is time in C under the event loop that py-spy
cannot name without --native: uvloop's loop and socket I/O, grpc's Cython/C core, asyncpg's
protocol parser, protobuf's C parsing. Stacks whose leaf is a blocking wait are left out: poll, epoll_wait, futex...
(with --native) and threads parked in threading.Condition.wait or a selector (anyio's worker
threads, the metrics server), which py-spy's --nonblocking sampling does not always see as idle.
`Thread.run` as a leaf is a thread whose target is C code: in these services, grpc aio's
completion-queue poller; py-spy cannot tell how much of it is waiting in epoll.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

FRAME = re.compile(r"^(?P<fn>.*?) \((?P<file>[^()]*?)(?::\d+)?\)$")
IDLE_LEAVES = {
    "poll",
    "epoll_wait",
    "epoll_pwait",
    "select",
    "futex",
    "pthread_cond_wait",
    "pthread_cond_timedwait",
    "__futex_abstimed_wait_common",
    "syscall",
    "nanosleep",
    "clock_nanosleep",
}
# Python-level waits in threads (anyio's worker pool, the metrics server): py-spy's --nonblocking
# sampling cannot always tell they are idle; they are blocked, not computing.
IDLE_FRAMES = {
    "Condition.wait (threading.py)",
    "_PollLikeSelector.select (selectors.py)",
    "EpollSelector.select (selectors.py)",
    "Queue.get (queue.py)",
    "Event.wait (threading.py)",
}
LOOP_ENTRY = "Runner.run (asyncio/runners.py)"
# py-spy names files relative to their sys.path entry, so the opentelemetry namespace package's
# modules appear under their own names.
OPENTELEMETRY = {
    "trace",
    "context",
    "propagate",
    "attributes",
    "baggage",
    "util",
    "_logs",
    "sdk",
    "_decorator.py",
    "metrics",
    "semconv",
    "instrumentation",
    "propagators",
    "exporter",
}


def parse(frame: str) -> tuple[str, str]:
    found = FRAME.match(frame.strip())
    if not found:
        return frame.strip(), "?"
    return found["fn"], found["file"]


def short_path(path: str) -> str:
    for marker in ("site-packages/", "/services/", "/src/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def package(path: str) -> str:
    path = short_path(path)
    if path.endswith(".so") or ".so." in path:
        return "native: " + path.split(".so")[0]
    if path.endswith((".c", ".h")):
        return "native (C source)"
    if path.split("/", 1)[0] in OPENTELEMETRY:
        return "opentelemetry"
    if path.startswith("<frozen") or "/" not in path:
        return "stdlib: " + path.split(".")[0]
    head = path.split("/", 1)[0]
    if head in OPENTELEMETRY:
        return "opentelemetry"
    if head in ("herald",) or head.startswith("herald_"):
        return "herald: " + head
    if head in ("asyncio", "concurrent", "json", "logging", "selectors", "threading.py", "ssl.py", "socket.py"):
        return "stdlib: " + head.removesuffix(".py")
    return head.removesuffix(".py")


def summarize(path: Path, top: int) -> list[str]:
    self_fn: Counter[str] = Counter()
    self_pkg: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = idle = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [parse(f) for f in stack.split(";") if f and not f.startswith(("process ", "thread "))]
        if not frames:
            continue
        if frames[-1][0] in IDLE_LEAVES or f"{frames[-1][0]} ({short_path(frames[-1][1])})" in IDLE_FRAMES:
            idle += n
            continue
        total += n
        fn, file = frames[-1]
        self_fn[f"{fn} ({short_path(file)})"] += n
        leaf = f"{fn} ({short_path(file)})"
        if leaf == LOOP_ENTRY:
            self_pkg["event loop / C under it (uvloop, grpc core, asyncpg protocol...)"] += n
        elif leaf == "Thread.run (threading.py)":
            self_pkg["thread running C code (grpc aio's completion-queue poller)"] += n
        else:
            self_pkg[package(file)] += n
        names = [f"{f} ({short_path(p)})" for f, p in frames]
        below = names[names.index(LOOP_ENTRY) + 1 :] if LOOP_ENTRY in names else names
        for name in set(below):
            inclusive[name] += n
    name = path.stem.removeprefix("profile-")

    def pct(count: int) -> str:
        return f"{100 * count / max(total, 1):6.1f}"

    out = [
        f"## {name}: {total} samples at 100 Hz (non-idle threads)"
        + (f"; {idle} samples of threads blocked in a wait left out" if idle else ""),
        "",
        "self % | package (leaf frame)",
    ]
    out += [f"{pct(c)} | {p}" for p, c in self_pkg.most_common(top)]
    out += ["", "self % | function (where)"]
    out += [f"{pct(c)} | {f}" for f, c in self_fn.most_common(top)]
    out += ["", "incl % | function (where), below the event loop"]
    out += [f"{pct(c)} | {f}" for f, c in inclusive.most_common(top * 2)]
    return [*out, ""]


def main() -> None:
    directory = Path(sys.argv[1])
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    lines: list[str] = []
    for path in sorted(directory.glob("profile-*.txt")):
        if path.name != "profile-top.txt":
            lines += summarize(path, top)
    text = "\n".join(lines)
    (directory / "profile-top.txt").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
