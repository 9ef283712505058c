"""The printed report of an invocation: Herald's medians beside REV's and the peer's, with ratios.

Printed at the end of `make bench`, and again from the stored records with
`python bench/run.py --report INVOCATION`, so a report can be read later or on another checkout.
"""

from __future__ import annotations

import json
import statistics
from typing import Any

import email_bench  # bench/email_bench.py: MODE=email

from harness.config import Config, log
from harness.cpu import contended
from harness.fanout import fanout_summary
from harness.machine import describe
from harness.steady import steady_report_again
from harness.tables import METRICS, fmt, median, table, used_runs
from herald.cli.stack import SERVICES

# The services a job passes through before its 202 (the CPU targets compare them as one sum).
ACCEPT_PATH = ("gateway", "router", "ledger")


def report(
    cfg: Config,
    machine: dict[str, Any],
    herald: list[dict[str, Any]],
    peer: list[dict[str, Any]],
    base: list[dict[str, Any]] | None = None,
) -> None:
    """Medians of each side's clean runs (all with ALL=1), their ratios, per-process CPU and memory,
    the work tree beside REV per process, and the last run's gRPC calls per job."""
    base = base or []
    if cfg.mode == "email":
        return email_bench.report(cfg, herald, base)
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
    wc = herald[0].get("worker_concurrency", cfg.wc) if herald else cfg.wc
    print(
        f"== N={cfg.n} C={cfg.conns} worker concurrency={wc} mode={cfg.mode} warm-up={cfg.warmup} "
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
                + (
                    "; SENDERS HELD (stopped while the load ran): a diagnostic, not a baseline"
                    if any(r.get("held_senders") for r in records)
                    else ""
                )
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
    table(cols, rows)
    for name, used in (("Herald", h), ("REV", b)):
        if cfg.mode in ("batch", "stream") and used:
            print(
                f"\n-- {name} batch path: accepted {fmt(median(used, 'accept_rps'), 0)} jobs/s, delivered "
                f"{fmt(median(used, 'e2e_jobs_per_s'), 0)} jobs/s; the batch client's own CPU "
                f"{fmt(median(used, 'loadgen_cpu_s'), 2)} s (apart from the sums)"
            )
        if cfg.mode == "fanout" and used:
            print(fanout_summary(name, used, median))
        waves = [r for r in used if "slowest_1pct_in_first_wave" in r]
        if cfg.mode == "http" and waves:
            shares = ", ".join(f"{r['slowest_1pct_in_first_wave']}/{r['slowest_1pct']}" for r in waves)
            after = ", ".join(fmt(r["accept_p99_after_first_wave_ms"], 1) for r in waves)
            print(
                f"\n-- {name}: of the slowest 1% of requests, in the first wave (the first {cfg.conns}, sent at once "
                f"on new connections), per run: {shares}; the accept p99 after it: {after} ms"
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
        table(["process", "CPU s/1000", "peak RSS", "peak PSS", "procs"], prow)
    if b:
        mine, theirs = per_process["Herald"], per_process[titles[1][0]]
        print("\n-- CPU s per 1000 delivered jobs, work tree beside REV (medians; ratio = work tree / REV)")
        table(
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
        bounds = last.get("rpc_p99_bound_ms", {})

        def p99_bound(key: str) -> str:
            if key not in bounds:
                return "NA"  # a record from before the bound was kept
            return f"<= {bounds[key]:g}" if bounds[key] is not None else "> 10000"

        table(
            ["service.method", "calls/job", "mean ms", "p99 ms (bucket)"],
            [[k, f"{v:.3f}", f"{last['rpc_mean_ms'][k]:.2f}", p99_bound(k)] for k, v in last["rpc_per_job"].items()],
        )
    if not all(all(r["services_alive_at_end"].values()) for r in herald + base):
        print("\nWARNING: a Herald service died during a run (see services_alive_at_end in the record)")
    print(f"\nrecords in {cfg.results} (invocation {cfg.invocation}; `python bench/run.py --report` it again)")


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
    table(["metric", *(f"SENDERS={n}" for n in counts), "ratio"], rows)
    for n in counts:
        for r in groups[n]:
            split = r.get("deliveries_per_sender", {})
            total = sum(split.values()) or 1
            shares = ", ".join(f"{name} {v:.0f} ({v * 100 / total:.0f}%)" for name, v in sorted(split.items()))
            print(f"  SENDERS={n}: deliveries per sender process since start (warm-up included): {shares}")


def report_again(cfg: Config, invocation: str) -> int:
    """`python bench/run.py --report INVOCATION`: the report of an earlier invocation, from its records."""
    rows = [json.loads(line) for line in cfg.results.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("invocation") == invocation]
    if rows and "steady_side" in rows[0]:  # MODE=steady
        return steady_report_again(cfg, rows)
    herald = [r for r in rows if r.get("system") == "herald" and r.get("role") != "base"]
    base = [r for r in rows if r.get("system") == "herald" and r.get("role") == "base"]
    peer = [r for r in rows if r.get("system") not in (None, "herald")]
    if not herald:
        log(f"no Herald record of invocation {invocation} in {cfg.results}")
        return 1
    first = herald[0]
    cfg.n, cfg.conns, cfg.wc, cfg.mode = (
        first.get("events", first["n"]),
        first["conns"],
        first["worker_concurrency"],
        first["mode"],
    )
    cfg.runs, cfg.invocation, cfg.profile = len(herald), invocation, bool(first.get("profiled"))
    report(cfg, first["machine"], herald, peer, base)
    return 0
