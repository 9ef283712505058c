"""One measured Herald run, in the order of the peers' run.sh, and the record it leaves.

Servers, the six services, 16 tenants, the peers' sink, a warm-up, the quiet-machine wait, then
the measured window (the peers' sampler around the load and the wait for the N-th delivery), and
the peers' summarize.py; this module adds what only Herald's side can tell (per-job latency, the
exact PostgreSQL CPU, gRPC calls per job, database work per job, sessions opened).
"""

# A harness: it starts local processes by design; its SQL conditions are its own constants.
# ruff: noqa: S607, S608

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import email_bench  # bench/email_bench.py: MODE=email

from harness import retention
from harness.config import Config, log
from harness.cpu import CLK_TCK, exact_postgres_fields, per_1000_delivered, tree_cpu_ticks
from harness.db import Db, db_counters, db_sessions
from harness.fanout import deliveries_of, fanout_fields, job_spans, read_event_accepts, subscribe_targets, warmup_events
from harness.herald_code import code_identity
from harness.infra import infrastructure, shared_server_roots
from harness.load import first_wave_of_slowest, loadgen_command, read_accept_spans, run_load
from harness.machine import wait_quiet
from harness.profiling import attach_profilers, save_profiles
from harness.service_metrics import (
    deliveries_per_sender,
    p99_bound_ms,
    rpc_mean_ms,
    rpc_per_job,
    rpc_totals,
    stream_leader,
)
from harness.sink import http_json, start_sink
from harness.stack import create_tenants, mesh_on, start_stack
from harness.steady_figures import open_loop_fields
from harness.tables import percentile, rounded
from harness.waiting import stop_process, wait_until

# The services that deliver (HOLD_SENDERS holds them); replicas are named after them.
SENDERS = ("webhook-sender", "email-sender")


def wc_set(cfg: Config) -> bool:
    """Whether the run sets the senders' worker concurrency (MODE=steady, fanout: Herald's own default
    unless WORKER_CONCURRENCY is given; the burst modes: 5, the peers' setting)."""
    return cfg.mode not in ("steady", "fanout") or cfg.wc_given


def run_tag(cfg: Config) -> str:
    """The record's `tag`: the mode, worker concurrency and what differs from a default run."""
    return (
        f"herald{'' if cfg.mode == 'http' else '-' + cfg.mode}"
        + (f"-c{cfg.wc}" if wc_set(cfg) else "")
        + ("-variant" if cfg.variant_env or cfg.variant else "")
        + ("-machineinfra" if cfg.infra == "machine" and cfg.cluster == 1 else "")
        + (f"-cluster{cfg.cluster}" if cfg.cluster > 1 else "")
        + (f"-senders{cfg.senders}" if cfg.senders > 1 or len(cfg.senders_list) > 1 else "")
        + ("-held" if cfg.hold_senders else "")
        + ("-header" if cfg.webhook_header else "")
    )


@contextlib.contextmanager
def senders_held(pids: dict[str, int]) -> Iterator[None]:
    """The senders among `pids` stopped (SIGSTOP) for the block and resumed after it, however it
    ends (HOLD_SENDERS): their messages wait in the stream meanwhile, as behind a sender that is
    busy elsewhere, and nothing is lost or delivered twice."""
    held = [pid for name, pid in pids.items() if name.startswith(SENDERS)]
    for pid in held:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in held:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


def herald_run(cfg: Config, index: int, machine: dict[str, Any]) -> dict[str, Any] | None:
    """One run and its record (also printed as summarize.py's line); MODE=email is email_bench's."""
    if cfg.mode == "email":  # the email path: bench/email_bench.py
        return email_bench.email_run(cfg, index, machine)
    token = secrets.token_hex(3)
    fanout = cfg.mode == "fanout"
    run_dir = cfg.tmp / f"run-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-herald-{index}"
    run_dir.mkdir(parents=True, exist_ok=True)
    tag = run_tag(cfg)
    profilers: dict[str, subprocess.Popen[bytes]] = {}
    with contextlib.ExitStack() as cleanup:
        infra = cleanup.enter_context(infrastructure(cfg, run_dir, token))
        log(f"{tag}: {infra.description}; run dir {run_dir}")
        stack_env = {
            # MODE=steady, fanout: Herald's own default unless WORKER_CONCURRENCY is given.
            **({"HERALD_WEBHOOK_CONCURRENCY": str(cfg.wc)} if wc_set(cfg) else {}),
            **({"HERALD_STREAM_REPLICAS": str(min(cfg.cluster, 3))} if cfg.cluster > 1 else {}),
            **cfg.service_settings(),
        }
        stack, endpoints = start_stack(cleanup, run_dir, infra, token, stack_env, cfg.variant)
        for _ in range(cfg.senders - 1):
            stack.add_replica("webhook-sender")
        pids = {name: s.process.pid for name, s in stack.services.items() if s.process is not None}
        operator_token = Path(endpoints["operator_token_file"]).read_text().strip()
        keys_file = run_dir / "keys.json"
        # MODE=fanout: one tenant, whose targets and subscriptions are made once the sink is up.
        keys, rate_per_min = create_tenants(endpoints["gateway_http"], operator_token, 1 if fanout else 16)
        keys_file.write_text(json.dumps(keys))
        keys_file.chmod(0o600)
        db = Db(infra.database_url)
        cleanup.callback(db.close)
        if not infra.shared:
            db.fetch("CHECKPOINT")

        sink, sink_port = start_sink(cfg, run_dir, cleanup)
        sink_url = f"http://127.0.0.1:{sink_port}"
        if fanout:
            subscribe_targets(endpoints["gateway_http"], keys[0], f"{sink_url}/hook", cfg.fanout)

        # MODE=fanout: the warm-up's and the load's events make FANOUT deliveries each.
        warmup = warmup_events(cfg) if fanout else cfg.warmup
        warm_deliveries, expected = deliveries_of(cfg, warmup), deliveries_of(cfg, cfg.n)

        # ---- warm-up (also proves delivery works end to end)
        if warmup > 0:
            http_json(f"{sink_url}/reset?target={warm_deliveries}", "POST")
            warm = run_load(
                loadgen_command(cfg, endpoints, sink_port, keys_file, warmup, f"warm{os.getpid()}{index}"),
                run_dir / "warmup.json", keys_file, None, cfg,
            )  # fmt: skip
            if warm["ok"] != warmup:
                raise RuntimeError(f"warm-up requests failed: {warm}")
            wait_until("warm-up deliveries", 120, lambda: http_json(f"{sink_url}/stats")["unique"] >= warm_deliveries)
            wait_until("warm-up DELIVERED rows", 60, lambda: db.delivered_rows() >= warm_deliveries)

        # make bench-retention: an old day of jobs on every side, dropped during the window on one.
        filled = retention.fill_old_day(infra.database_url) if retention.enabled() else {}
        dropper = retention.Dropper(infra.database_url) if filled and retention.drops(cfg) else None
        busy = wait_quiet(cfg)
        log(f"{tag} N={cfg.n} C={cfg.conns} busy_before={busy}%: measuring")

        # ---- measured run
        http_json(f"{sink_url}/reset?target={expected}", "POST")
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
            profilers = attach_profilers(cleanup, run_dir, pids)
        run_id = f"run{os.getpid()}{index}"
        if dropper is not None:
            dropper.start()
        with senders_held(pids if cfg.hold_senders else {}):
            load = run_load(
                loadgen_command(cfg, endpoints, sink_port, keys_file, cfg.n, run_id),
                run_dir / "load.json", keys_file, run_dir / "accepts.txt", cfg,
            )  # fmt: skip
        # The open loop: what is not delivered DRAIN s after the load's end counts as undelivered.
        drain = cfg.drain_s if cfg.open_loop else cfg.e2e_timeout
        e2e_ok = wait_until(
            f"the {expected}th unique delivery", drain, lambda: http_json(f"{sink_url}/stats")["unique"] >= expected
        )
        wait_until("DELIVERED rows", min(60, drain), lambda: db.delivered_rows() >= expected + warm_deliveries)
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
        # The measured jobs: their idempotency keys (events: their event ids) name the run.
        run_jobs = "event_id LIKE 'run%'" if fanout else "idempotency_key LIKE 'run%'"
        rows = db.fetch(f"SELECT status, count(*) AS n FROM jobs WHERE {run_jobs} GROUP BY status")
        (run_dir / "db_status.txt").write_text("".join(f"{r['status']} {r['n']}\n" for r in rows))
        last = db.fetch(
            "SELECT COALESCE(extract(epoch FROM max(updated_at)) * 1000, 0) AS t FROM jobs "
            f"WHERE {run_jobs} AND status = 'DELIVERED'",
        )[0]["t"]
        (run_dir / "db_last.txt").write_text(f"{float(last)}\n")
        alive = {name: s.process is not None and s.process.poll() is None for name, s in stack.services.items()}
        summary_file = run_dir / "summary.jsonl"
        line = subprocess.run(
            ["python3", str(cfg.peers / "tools" / "summarize.py"), "--run-dir", str(run_dir), "--peer", "herald",
             "--tag", tag, "--n", str(expected), "--c", str(cfg.conns), "--wc", str(cfg.wc), "--busy-before", str(busy),
             "--e2e-ok", "1" if e2e_ok else "0", "--results", str(summary_file)],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        record: dict[str, Any] = json.loads(summary_file.read_text().splitlines()[-1])
        events = read_event_accepts(run_dir / "accepts.txt") if fanout else {}
        spans = job_spans(events) if fanout else read_accept_spans(run_dir / "accepts.txt")
        latencies = sorted(arrivals[i] - t for i, (t, _) in spans.items() if i in arrivals)
        delivered = max(int(sink_stats["unique"]), 1)
        record.update(
            # The sampler (the peers' method) misses PostgreSQL backends that started and exited between
            # two samples: Herald's ledger pool opens and closes connections under load. The exact figure
            # for the whole cluster, from the postmaster's own and reaped children's CPU, corrects the sum.
            **exact_postgres_fields(record, pg_exact_s, delivered),
            system="herald",
            mode=cfg.mode,
            worker_concurrency=cfg.wc if wc_set(cfg) else "Herald's default",
            infra=f"{infra.description}, gRPC mesh {'mTLS' if mesh_on(stack) else 'plaintext'}",
            shared_infra=infra.shared,
            profiled=cfg.profile,
            held_senders=cfg.hold_senders,
            client=load.get("client", "loadgen.js"),
            a2d_p50_ms=rounded(percentile(latencies, 50)),
            a2d_p99_ms=rounded(percentile(latencies, 99)),
            a2d_max_ms=rounded(latencies[-1] if latencies else None),
            a2d_jobs=len(latencies),
            # The slowest 1% of requests: how many were the first wave (MODE=http; see first_wave_of_slowest).
            **(first_wave_of_slowest(spans, cfg.conns) if cfg.mode not in ("steady", "fanout") else {}),
            service_env=cfg.service_env,
            # The side's infrastructure (harness/switches.py): its switches, and what they came to.
            variant=cfg.variant,
            nats_sync_interval=infra.sync_interval if not infra.shared else None,
            bus_users=infra.bus_users is not None,
            mesh_tls=mesh_on(stack),
            webhook_header=cfg.webhook_header,
            cpu_s_per_1000_delivered=per_1000_delivered(record["cpu_s"], delivered),
            cpu_s_per_1000_delivered_total=round(record["cpu_s_peer_total"] * 1000 / delivered, 3),
            services_alive_at_end=alive,
            cluster_nodes=cfg.cluster,
            webhook_senders=cfg.senders,
            # Deliveries per webhook-sender process (how the senders shared the work consumer).
            deliveries_per_sender=deliveries_per_sender(stack),
            # What the database did per delivered job (pg_stat_database, settled; WAL of the whole
            # private cluster): the writes the single primary must sustain (docs/operations.md).
            db_per_job={k: round((db_after[k] - db_before[k]) / delivered, 3) for k in db_after if k in db_before},
            work_stream_leader=(
                stream_leader(infra.nats_url, f"bench{token}_work".upper(), infra.nats_options())
                if cfg.cluster > 1
                else None
            ),
            # New PostgreSQL sessions on Herald's database during the window (pool churn: each is a
            # backend process started and torn down).
            db_sessions_opened=sessions_opened,
            # Server-side gRPC calls per delivered job and their mean duration, per service method.
            rpc_per_job=rpc_per_job(rpc_before, rpc_after, delivered),
            rpc_mean_ms=rpc_mean_ms(rpc_before, rpc_after),
            # The bucket bound of the window's p99 inside the service, per method (coarse: 25, 50, 100 ms...).
            rpc_p99_bound_ms=p99_bound_ms(rpc_before, rpc_after),
            tenant_rate_per_min=rate_per_min,
            invocation=cfg.invocation,
            machine=machine,
            **code_identity(),
        )
        record.update(filled, **(dropper.join() if dropper is not None else {}))
        if cfg.open_loop:  # the rate, delivered and undelivered among the accepted, p99.9, the SLO
            record.update(open_loop_fields(cfg, spans, arrivals, record))
        if fanout:  # events/s, deliveries/s, event-to-last-delivery
            record.update(fanout_fields(cfg, events, arrivals, load, sink_stats))
        if cfg.profile:
            record["profile_dir"] = str(save_profiles(cfg, run_dir, profilers))
        print(line.replace("peer=", "system=", 1), flush=True)
        return record
    return None
