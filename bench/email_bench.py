"""`make bench MODE=email`: the email path, through the SendGrid stand-in (docs/performance.md, "What is measured, and how").

One run, in the order of a webhook run (`bench/run.py`): private infrastructure, the six
services (`HERALD_EMAIL_CONCURRENCY` = WORKER_CONCURRENCY), 16 tenants with unlimited limits,
each registering the SendGrid stand-in (`tests/standins/sendgrid.py`, in this process, left out
of the CPU sums like the sink) as its provider; with `FALLBACK=1` each tenant first registers a
second SendGrid stand-in that answers every send with 503, at a higher priority, so every walk
tries it first (until its breaker opens: then the walk skips it without a call, as in production)
and falls back to the working one; `FALLBACK=calls` keeps that breaker closed, so every walk
makes the failing call first (two provider calls per email). WARMUP emails, the quiet-machine wait, then N emails as
`POST /v1/emails/batch` requests of BATCH items over C (at most 4) connections, waited for
until N DELIVERED rows; the peers' sampler measures CPU and memory per process meanwhile.

Figures: accepted emails/s, delivered emails/s (first request sent -> N-th DELIVERED row, from
the ledger's own `updated_at`), CPU seconds per 1,000 delivered emails per process, provider
calls per delivered email, the gRPC calls per email. Records go to the same runs.jsonl with
`mode` "email" (or "email-fallback"); `python bench/run.py --report` prints them as any other.
"""

# A harness: it starts local processes and talks to 127.0.0.1 by design.
# ruff: noqa: S607

from __future__ import annotations

import contextlib
import json
import os
import secrets
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from harness.config import Config, log
from harness.cpu import contended, per_1000_delivered
from harness.db import Db
from harness.herald_code import code_identity
from harness.infra import infrastructure
from harness.machine import describe, wait_quiet
from harness.service_metrics import rpc_per_job, rpc_totals
from harness.stack import create_tenants, start_stack
from harness.tables import fmt, median, table, used_runs
from harness.waiting import stop_process, wait_until

ROOT = Path(__file__).resolve().parent.parent
SERVICES = ("gateway", "router", "ledger", "webhook-sender", "email-sender", "verifier")
SENDER = "Acme <hello@acme.example>"


def _stand_in() -> Any:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.standins.sendgrid import SendGridStandIn

    return SendGridStandIn()


def _register(gateway: str, key: str, stand_in: Any, n: int, priority: int) -> None:
    provider_key = stand_in.add_key(f"SG.bench-{n:06d}-aBcDeFgHiJ.kLmNoPqRsT{n:06d}")
    answer = httpx.post(
        f"{gateway}/v1/providers",
        json={"provider": "sendgrid", "api_key": provider_key, "priority": priority, "base_url": stand_in.base_url},
        headers={"authorization": f"Bearer {key}"},
        timeout=30,
    )
    answer.raise_for_status()


def _email(n: int, run_id: str) -> dict[str, Any]:
    return {
        "from": SENDER,
        "to": [f"user{n}@example.com"],
        "subject": f"Your receipt {run_id}-{n}",
        "text": "Thanks for your order. " * 8,
    }


def _submit(gateway: str, keys: list[str], n: int, batch: int, conns: int, run_id: str) -> dict[str, Any]:
    """N emails in batches, round-robin over the tenants, `conns` requests at a time."""
    chunks = [(i, min(batch, n - i)) for i in range(0, n, batch)]
    lock = threading.Lock()
    accepted = [0]
    latencies: list[float] = []
    errors: list[str] = []

    def worker() -> None:
        with httpx.Client(timeout=120) as client:
            while True:
                with lock:
                    if not chunks:
                        return
                    start, size = chunks.pop(0)
                key = keys[(start // batch) % len(keys)]
                items = [_email(start + j, run_id) for j in range(size)]
                began = time.monotonic()
                answer = client.post(
                    f"{gateway}/v1/emails/batch", json={"items": items}, headers={"authorization": f"Bearer {key}"}
                )
                took = time.monotonic() - began
                ok = sum(1 for r in answer.json().get("results", []) if r.get("status") == 202)
                with lock:
                    accepted[0] += ok
                    latencies.append(took)
                    if answer.status_code != 200 or ok != size:
                        errors.append(answer.text[:300])

    began = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(max(1, min(conns, 4)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"accepted": accepted[0], "wall_s": time.monotonic() - began, "latencies": latencies, "errors": errors}


def email_run(cfg: Config, index: int, machine: dict[str, Any]) -> dict[str, Any] | None:
    """One measured email run, on the webhook runs' infrastructure and helpers (bench/harness/)."""
    fallback_setting = os.environ.get("FALLBACK", "0")
    fallback = fallback_setting not in ("0", "", "false", "no")
    # FALLBACK=calls: the failing provider's breaker never opens, so every walk calls it first.
    every_call = fallback_setting == "calls"
    mode = ("email-fallback-calls" if every_call else "email-fallback") if fallback else "email"
    token = secrets.token_hex(3)
    run_dir = cfg.tmp / f"run-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-herald-{mode}-{index}"
    run_dir.mkdir(parents=True, exist_ok=True)
    tag = f"herald-{mode}-c{cfg.wc}"
    with contextlib.ExitStack() as cleanup:
        infra = cleanup.enter_context(infrastructure(cfg, run_dir, token))
        log(f"{tag}: {infra.description}; run dir {run_dir}")
        good = _stand_in()
        cleanup.callback(good.close)
        failing = _stand_in() if fallback else None
        if failing is not None:
            cleanup.callback(failing.close)
        stack_env = {
            "HERALD_EMAIL_CONCURRENCY": str(cfg.wc),
            "HERALD_WEBHOOK_CONCURRENCY": str(cfg.wc),
            **({"HERALD_EMAIL_BREAKER_FAILURES": "1000000000"} if every_call else {}),
        }
        stack, endpoints = start_stack(cleanup, run_dir, infra, token, stack_env, cfg.variant)
        gateway = endpoints["gateway_http"]
        pids = {name: stack.services[name].process.pid for name in SERVICES}  # type: ignore[union-attr]
        operator_token = Path(endpoints["operator_token_file"]).read_text().strip()
        keys, _rate = create_tenants(gateway, operator_token)
        for n, key in enumerate(keys):
            if failing is not None:
                _register(gateway, key, failing, 1000 + n, priority=10)
            _register(gateway, key, good, n, priority=5)
        if failing is not None:
            failing.fail_with = 503
        db = Db(infra.database_url)
        cleanup.callback(db.close)
        if not infra.shared:
            db.fetch("CHECKPOINT")

        def delivered() -> tuple[int, float]:
            row = db.fetch(
                "SELECT count(*) AS n, COALESCE(extract(epoch FROM max(updated_at)), 0) AS t FROM jobs "
                "WHERE channel = 'email' AND status = 'DELIVERED'"
            )[0]
            return int(row["n"]), float(row["t"])

        if cfg.warmup > 0:
            warm = _submit(gateway, keys, cfg.warmup, min(cfg.batch, 100), cfg.conns, f"warm{token}")
            if warm["accepted"] != cfg.warmup:
                raise RuntimeError(f"warm-up emails refused: {warm['errors'][:2]}")
            wait_until("warm-up DELIVERED emails", 120, lambda: delivered()[0] >= cfg.warmup)

        busy = wait_quiet(cfg)
        log(f"{tag} N={cfg.n} busy_before={busy}%: measuring")
        calls_before = len(good.requests) + (len(failing.requests) if failing is not None else 0)
        rpc_before = rpc_totals(endpoints["metrics"])
        roots = {**{name: [pid] for name, pid in pids.items()}, **infra.roots}
        sampler = subprocess.Popen(
            ["python3", str(cfg.peers / "tools" / "rss_sampler.py"), str(run_dir / "mem.json"), cfg.sample_interval,
             *(f"{label}={pid}" for label, pids_ in roots.items() for pid in pids_)],
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        cleanup.callback(stop_process, sampler)
        time.sleep(0.5)
        started_wall = time.time()
        load = _submit(gateway, keys, cfg.n, cfg.batch, cfg.conns, f"run{token}")
        target = cfg.n + cfg.warmup
        done = wait_until(f"{cfg.n} DELIVERED emails", cfg.e2e_timeout, lambda: delivered()[0] >= target)
        stop_process(sampler)
        count, last = delivered()
        rpc_after = rpc_totals(endpoints["metrics"])
        mem = json.loads((run_dir / "mem.json").read_text())
        calls = len(good.requests) + (len(failing.requests) if failing is not None else 0) - calls_before
        measured = max(count - cfg.warmup, 1)
        window = max(last - started_wall, 0.001)
        other = mem["machine_task_cpu_s"] - mem["cpu_s_total"] - mem["sampler_cpu_s"]
        record: dict[str, Any] = {
            "system": "herald",
            "peer": "herald",
            "tag": tag,
            "mode": mode,
            "n": cfg.n,
            "c": min(cfg.conns, 4),
            "wc": cfg.wc,
            "batch": cfg.batch,
            "busy_before": busy,
            "e2e_ok": done,
            "accepted": load["accepted"],
            "accept_rps": round(load["accepted"] / max(load["wall_s"], 0.001), 1),
            "delivered": measured,
            "delivered_jobs_per_s": round(measured / window, 1),
            "e2e_s": round(window, 2),
            "provider_calls_per_job": round(calls / measured, 3),
            "cpu_s": mem["cpu_s"],
            "cpu_s_peer_total": mem["cpu_s_total"],
            "cpu_s_per_1000_delivered": per_1000_delivered(mem["cpu_s"], measured),
            "cpu_s_per_1000_delivered_total": round(mem["cpu_s_total"] * 1000 / measured, 3),
            "cpu_ms_per_job": round(mem["cpu_s_total"] * 1000 / measured, 3),
            "foreign_cpu_s": round(other, 2),
            "window_s": mem["wall_s"],
            "contended": other / max(mem["wall_s"], 0.001) > float(os.environ.get("CONTENDED_CORES", "0.3")),
            "peak_rss_mb": mem["peak_total_rss_mb"],
            "peak_pss_mb": mem["peak_total_pss_mb"],
            "per_label": mem["per_label"],
            "rpc_per_job": rpc_per_job(rpc_before, rpc_after, measured),
            "errors": load["errors"][:3],
            "infra": infra.description,
            "invocation": cfg.invocation,
            "machine": machine,
            **code_identity(),
        }
        print(
            f"system=herald-{mode} N={cfg.n} accept={record['accept_rps']}jobs/s "
            f"delivered={measured}/{cfg.n} ({record['delivered_jobs_per_s']} jobs/s, {window:.2f}s) "
            f"provider_calls/job={record['provider_calls_per_job']} cpu={record['cpu_ms_per_job']}ms/job "
            f"email-sender={record['cpu_s_per_1000_delivered'].get('email-sender')}ms/job "
            f"foreign_cpu={record['foreign_cpu_s']}s{' CONTENDED' if record['contended'] else ''}",
            flush=True,
        )
        return record
    return None


def report(cfg: Config, records: list[dict[str, Any]], base: list[dict[str, Any]]) -> None:
    """The report of MODE=email runs: medians of the clean runs (of all with ALL=1), and with
    REV= the base commit's beside them (ratio = work tree / REV)."""
    used, used_base = used_runs(records), used_runs(base) if base else []
    first = records[0]
    print()
    print("== " + describe(first["machine"]))
    print(f"== Herald {first['herald_commit'][:12]} ({first['herald_source']}), {first['infra']}")
    if base:
        print(f"== REV {base[0]['herald_commit'][:12]} ({base[0]['herald_source']}), run beside it in each round")
    print(
        f"== MODE={cfg.mode} ({first['mode']}): N={cfg.n} emails as POST /v1/emails/batch of {cfg.batch} items over "
        f"{first['c']} connections, email concurrency {cfg.wc}; medians of {len(used)} run(s) of {len(records)}"
        + (" (all contended: other load on the machine)" if all(map(contended, records)) else "")
    )

    def row(label: str, work_tree: float | None, rev: float | None, digits: int) -> list[str]:
        cells = [label, fmt(work_tree, digits)]
        if base:
            ratio = f"{work_tree / rev:.2f}x" if work_tree is not None and rev else "NA"
            cells += [fmt(rev, digits), ratio]
        return cells

    rows = [
        row(label, median(used, key), median(used_base, key) if base else None, digits)
        for key, label, digits in (
            ("accept_rps", "accepted emails/s", 0),
            ("delivered_jobs_per_s", "delivered emails/s (first request -> N-th DELIVERED)", 0),
            ("e2e_s", "e2e s", 2),
            ("provider_calls_per_job", "provider calls per delivered email", 2),
            ("cpu_ms_per_job", "CPU ms per delivered email (all processes, sampler)", 2),
            ("peak_rss_mb", "peak RSS MB (sum)", 0),
            ("foreign_cpu_s", "other load on the machine, CPU s", 1),
        )
    ]
    cols = ["metric", "Herald"] + (["REV", "Herald/REV"] if base else [])
    table(cols, rows)
    print("delivered (all runs): " + ", ".join(f"{r['delivered']}/{r['n']}" for r in records + base))
    labels = [k for k in first["cpu_s"] if not k.startswith("_")]
    print("\n-- per process (medians): CPU s per 1000 delivered emails")

    def per(records_: list[dict[str, Any]], key: str) -> float | None:
        values = [r["cpu_s_per_1000_delivered"].get(key, 0) for r in records_]
        return statistics.median(values) if values else None

    table(["process", "CPU s/1000", *cols[2:]], [row(k, per(used, k), per(used_base, k), 2) for k in labels])
    if used[-1].get("rpc_per_job"):
        print("\n-- server-side gRPC calls per delivered email (last run)")
        table(["service.method", "calls/job"], [[k, f"{v:.3f}"] for k, v in used[-1]["rpc_per_job"].items()])
    print(f"\nrecords in {cfg.results} (invocation {cfg.invocation})")
