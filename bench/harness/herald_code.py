"""The Herald being measured: the work tree's, or with REV= (in the child) that commit's.

The same harness drives a base commit's tree, which may predate what newer trees have: such
names are looked up here, once, not imported, so an older tree still runs.
"""

# A harness: it runs git by name, as a developer would.

from __future__ import annotations

import dataclasses
import importlib
import inspect
import os
import subprocess
import sys
import warnings
from typing import Any

import herald.cli.embedded as embedded
import herald.cli.stack
import herald.config
from harness.config import ROOT

# Older trees have no cluster.
EmbeddedNatsCluster: Any = getattr(embedded, "EmbeddedNatsCluster", None)
# Where EmbeddedPostgres looks its binaries up: a module of the package, or (an older tree) the one module.
embedded_postgres: Any = sys.modules.get("herald.cli.embedded.postgres", embedded)
# A server list (a cluster); an older tree runs against one server, whose URL nats-py takes as is.
nats_servers: Any = getattr(herald.config, "nats_servers", lambda url: url)

# The stack's settings: a module of their own, or (an older tree) beside the stack.
StackConfig: Any = getattr(herald.cli.stack, "StackConfig")  # noqa: B009 - named once for every tree

# What `herald up` runs that older trees do not have (harness/switches.py): NATS users per service,
# mutual TLS between the services, the embedded nats-server's sync_interval.
try:
    BusUsers: Any = importlib.import_module("herald.cli.bus_auth").BusUsers
except ImportError:
    BusUsers = None
STACK_FIELDS = {f.name for f in dataclasses.fields(StackConfig)}
NATS_TAKES_SYNC = "sync_interval" in inspect.signature(embedded.EmbeddedNats).parameters
# The tree's own sync_interval for its embedded NATS ("": none set, the server's default).
NATS_OWN_SYNC: str = getattr(sys.modules.get("herald.cli.embedded.nats"), "DEFAULT_SYNC_INTERVAL", "")

# embedded-postgres imports platformdirs, which warns about an unset XDG_RUNTIME_DIR it never uses.
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")


def code_identity() -> dict[str, Any]:
    """Which Herald was measured: REV's commit, or the work tree (HEAD plus whether src/services differ)."""
    if os.environ.get("BENCH_REV_SHA"):
        return {"herald_commit": os.environ["BENCH_REV_SHA"], "herald_source": "REV (git archive)"}
    git = ["git", "--no-optional-locks", "-C", str(ROOT)]
    try:
        sha = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        dirty = (
            subprocess.run(
                [*git, "status", "--porcelain", "--", "src", "services"], capture_output=True, text=True, check=True
            ).stdout.strip()
            != ""
        )
    except (OSError, subprocess.CalledProcessError):
        return {"herald_commit": "?", "herald_source": "work tree"}
    return {"herald_commit": sha, "herald_source": "work tree" + (" with uncommitted changes" if dirty else "")}
