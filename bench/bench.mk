# Benchmarks (docs/performance.md). Included by the Makefile; not part of `make test`.
#
#   make bench                              Herald alone: N=2000, 64 connections, worker concurrency 5
#   make bench PEER=bullmq                  + the BullMQ peer's own run.sh in the same invocation, and ratios
#   make bench PEER=celery N=5000 RUNS=3    medians of 3 interleaved rounds
#   make bench MODE=grpc                    NotificationService.SendWebhook instead of HTTP
#   make bench MODE=batch N=20000           POST /v1/webhooks/batch, BATCH=1000 items a request over C=4
#                                           connections: accepted and delivered jobs/s of the batch path
#   make bench MODE=stream N=20000          the same batches over NotificationService.SubmitWebhooks streams
#   make bench MODE=steady PEER=bullmq      open loop (bench/openloop.js): request i due at t0 + i/rate, latency
#                                           from when due; rates 100, 200, ... (STEP, MAX_RATE or RATES=200,400),
#                                           SECONDS=20 each, for Herald and the peer at WORKER_CONCURRENCY 5 and 50
#                                           (PEER_WC): accept and accept-to-delivery percentiles, undelivered,
#                                           CPU per delivered job per process, and each side's SLO capacity
#                                           (accept p99 <= 100 ms, accept-to-delivery p99 <= 1 s, all delivered);
#                                           SERVICE_ENV='HERALD_X=v ...' for Herald's services, VARIANT_ENV= for a
#                                           second work-tree side with more settings (see bench/harness/steady.py)
#   make bench MODE=fanout N=1000           events fanned out: one tenant with FANOUT=10 webhook targets at the sink
#                                           (each its own signing secret) and a subscription each, matching the one
#                                           event type; N POST /v1/events over C connections (closed loop):
#                                           accepted events/s, deliveries/s (unique arrivals / first 202 to last
#                                           arrival), accept-to-delivery p50/p99 per delivery, event-to-last-delivery
#                                           p50/p99, CPU per delivery per process (bench/harness/fanout.py)
#   make bench MODE=fanout RATES=25,50,75,100 SECONDS=15   the same events in the open loop, rate by rate as
#                                           MODE=steady (STEP, MAX_RATE, DRAIN, PAST, SLO_*): per rate accept p99,
#                                           events/s, deliveries/s, per-delivery and event-to-last-delivery p99
#
# Every Herald side runs as `herald up` runs its tree: its private nats-server with `sync_interval: always`
# and a NATS user per service (herald.cli.bus_auth), the services' gRPC over mutual TLS (herald.grpcio.mesh),
# the private PostgreSQL with a password (a tree from before that gets a trust cluster of its own, so REV= runs
# it); a tree without one of these runs without it. MODE=steady puts the same tree beside itself with one thing
# changed: VARIANT adds a work-tree side per space-separated word (switches joined by + make one side),
# VARIANT_ENV's settings on each (bench/harness/switches.py):
#   make bench MODE=steady PEER=bullmq VARIANT=sync-default   + the work tree on a nats-server without
#                                           sync_interval (JetStream's default, a sync every 2 minutes)
#   make bench MODE=steady VARIANT='plain-bus plain-mesh'     + the work tree on a bus without users, and
#                                           + one whose services call each other in plaintext
#   make bench MODE=steady VARIANT=plain-bus+plain-mesh       + one side with neither
#   make bench MODE=steady REV=f58a3d1 BASE_VARIANT=sync-always BASE_ENV='HERALD_X=v'
#                                           the REV side's switches (sync-always gives an older tree's NATS
#                                           sync_interval: always) and its services' own settings
#   make bench MODE=steady WEBHOOK_HEADER=1  every Herald webhook (all sides; MODE=http too) carries a custom
#                                           header for its receiver, which Herald seals at rest and opens to call
#   make bench REV=d87b5d9                  + that commit run beside the work tree, round by round, and
#                                           work-tree/REV ratios per metric and per process
#   make bench CLUSTER=3 SENDERS=1,2        on a private three-node JetStream cluster (streams at R3), each
#                                           round one run with one webhook-sender and one with two: the
#                                           sides beside each other and each sender's share of the deliveries
#   make bench-cluster-faults               the cluster fault test at full size (A's backlog of 10,000)
#   make bench-profile                      one Herald run with py-spy on the hot services
#   make bench HOLD_SENDERS=1               the senders stopped while the load runs (resumed after it): what
#                                           the deliveries beside a burst cost its accept rate (a diagnostic)
#   make bench-setup                        the peers' setup.sh (make bench runs it when a peer needs it)
#   make bench-retention                    MODE=steady at RATES (560/s: 70 % of the SLO capacity) with an old day
#                                           of RETENTION_JOBS (1,000,000) jobs, dropped by retention during the
#                                           window on one side and not on the other: accept and accept-to-delivery
#                                           p99 of both and their ratio (bench/harness/retention.py)
#
# Other knobs (see bench/run.py): C WORKER_CONCURRENCY WARMUP INFRA=private|machine PG=system|embedded
# REV=<commit> BASE_RATE=same|unlimited BASE_VARIANT BASE_ENV WEBHOOK_HEADER FANOUT QUIET_BUSY_PCT QUIET_MAX_WAIT E2E_TIMEOUT RETRY_CONTENDED SAMPLE_INTERVAL PROFILE_NATIVE
# HOLD_SENDERS PEERS BENCH_TMP RESULTS. bench-profile installs py-spy into the venv when it is missing.
# Method, machine and figures: docs/performance.md.

PEERS ?= ../shared/bench/peers
PY_SPY_VERSION := 0.4.3
BENCH_VARS := N RUNS PEER MODE BATCH REV BASE_RATE C WORKER_CONCURRENCY WARMUP INFRA PG PROFILE QUIET_BUSY_PCT QUIET_MAX_WAIT \
	E2E_TIMEOUT SAMPLE_INTERVAL RETRY_CONTENDED PROFILE_NATIVE HOLD_SENDERS ALL PEERS BENCH_TMP RESULTS FALLBACK CLUSTER SENDERS \
	RATES STEP MAX_RATE SECONDS DRAIN PAST PEER_WC SLO_ACCEPT_P99_MS SLO_A2D_P99_MS LIGHT_RATE SERVICE_ENV VARIANT_ENV \
	VARIANT BASE_VARIANT BASE_ENV WEBHOOK_HEADER FANOUT
BENCH_ENV = $(strip $(foreach v,$(BENCH_VARS),$(if $($(v)),$(v)='$($(v))')))

.PHONY: bench bench-profile bench-setup bench-retention

bench: $(VENV)/.installed
	$(BENCH_ENV) $(PY) bench/run.py

bench-profile: $(VENV)/.installed
	@test -x $(VENV)/bin/py-spy || $(UV) pip install --quiet --python $(VENV) py-spy==$(PY_SPY_VERSION)
	$(BENCH_ENV) PROFILE=1 $(PY) bench/run.py

bench-setup:
	$(PEERS)/setup.sh

bench-retention: $(VENV)/.installed
	$(BENCH_ENV) MODE=steady RATES='$(or $(RATES),560)' RETENTION_JOBS='$(or $(RETENTION_JOBS),1000000)' \
		SERVICE_ENV='HERALD_ROW_RETENTION_DAYS=free=36500,indie=36500,startup=36500 HERALD_PAYLOAD_RETENTION_DAYS=free=36500,indie=36500,startup=36500 $(SERVICE_ENV)' \
		VARIANT_ENV='HERALD_BENCH_RETENTION_DROP=1' $(PY) bench/run.py

# Fairness (docs/performance.md, "Fairness"): tenant A's backlog of A_JOBS against tenant B's B_JOBS.
.PHONY: bench-fairness
bench-fairness: $(VENV)/.installed
	$(if $(A_JOBS),A_JOBS='$(A_JOBS)') $(if $(B_JOBS),B_JOBS='$(B_JOBS)') $(PY) bench/fairness.py

# The cluster fault test (docs/performance.md, "A three-node cluster") at full size: tenant A's backlog of A_JOBS (10,000) while
# tenant B sends at a steady pace, through the faults; its report is printed at the end.
# Too long for the suite (which runs it with 300); its own PostgreSQL and three NATS nodes.
.PHONY: bench-cluster-faults
bench-cluster-faults: $(VENV)/.installed
	FAULTS_BACKLOG_A='$(or $(A_JOBS),10000)' $(PY) -m pytest -q -p no:cacheprovider --timeout=1800 tests/cluster/test_zz_cluster_faults.py

# Isolation: tenant X's X_JOBS (150) webhooks to a receiver that never answers,
# one that answers after SLOW_S (10 s) and one that refuses connections (a case each), then
# tenant Y's Y_JOBS (20) to a fast receiver: Y's accept-to-delivery p99 beside Y's idle p99,
# medians of RUNS (3) rounds; then, on a stack whose lanes may hold LANE_LIMIT (200) unacknowledged
# messages, X's 2 x LANE_LIMIT to a refusing receiver and a Y on X's lane (LANE_WAIT_S, 120).
.PHONY: bench-isolation
bench-isolation: $(VENV)/.installed
	$(if $(X_JOBS),X_JOBS='$(X_JOBS)') $(if $(Y_JOBS),Y_JOBS='$(Y_JOBS)') $(if $(RUNS),RUNS='$(RUNS)') \
		$(if $(SLOW_S),SLOW_S='$(SLOW_S)') $(if $(LANE_LIMIT),LANE_LIMIT='$(LANE_LIMIT)') \
		$(if $(LANE_WAIT_S),LANE_WAIT_S='$(LANE_WAIT_S)') $(PY) bench/isolation.py
