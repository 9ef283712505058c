"""The peers' sink (sink/sink.js), started for Herald with a preload that counts its `webhook-id`.

The sink is the peers' own, so Herald's deliveries are counted exactly as a peer's are: unique
jobs, duplicates and the time of the N-th unique delivery; the preload also keeps each job's
first arrival time, for the accept-to-delivery latency.
"""

# A harness: it starts local processes and talks to 127.0.0.1 by design.
# ruff: noqa: S310, S607

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

from harness.config import BENCH, Config
from harness.waiting import stop_process, succeeds, wait_until
from herald.cli import embedded


def http_json(url: str, method: str = "GET") -> Any:
    """A JSON answer of the sink (POST with an empty body for its resets)."""
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def start_sink(cfg: Config, run_dir: Path, cleanup: contextlib.ExitStack) -> tuple[subprocess.Popen[bytes], int]:
    """The sink on a free port, logging to the run directory, stopped with the run; its process
    and port, once it answers."""
    sink_port = embedded.free_port()
    with (run_dir / "sink.log").open("wb") as sink_log:
        sink = subprocess.Popen(
            ["node", "--require", str(BENCH / "shims" / "sink_webhook_id.js"), str(cfg.peers / "sink" / "sink.js")],
            env={**os.environ, "SINK_PORT": str(sink_port)},
            stdout=sink_log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    cleanup.callback(stop_process, sink)
    wait_until("sink", 20, lambda: succeeds(lambda: http_json(f"http://127.0.0.1:{sink_port}/stats")))
    return sink, sink_port
