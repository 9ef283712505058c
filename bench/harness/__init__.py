"""The `make bench` harness behind bench/run.py, one room per concern.

bench/run.py is the entry (its docstring lists the settings); it first lets `rev_tree` re-execute
it onto REV's tree, and only then imports these modules, which import Herald. The rooms:

  config           the settings (Config, from make's variables), paths, the log line
  rev_tree         REV's child: that commit's src/ and services/ exported and put first on PYTHONPATH
  herald_code      the Herald being measured: lookups that tolerate older trees, which commit it is
  machine          the machine description, and the wait for a quiet machine
  db               PostgreSQL: one-off statements, the poll connection, the database's counters
  switches         what a side's infrastructure may differ in from `herald up`'s (VARIANT, BASE_VARIANT)
  infra            the run's PostgreSQL and NATS (private, or the machine's), and their process roots
  stack            the six services started from the tree being measured, and the benchmark tenants
  polling          waiting for a condition, the sink's JSON over HTTP
  processes        stopping what the bench started, and CPU ticks of a process tree
  service_metrics  what the services report on /metrics, and a stream's leader
  load             the load driver: the client command per MODE, and its accept timestamps
  herald_run       one measured Herald run and its record
  peer_run         one run of the peer's own run.sh
  rev_run          the REV side: one Herald run in a child process driven from REV's tree
  profiling        PROFILE=1: py-spy during the measured window
  tables           medians, contended runs, the metric list and the aligned tables
  report           the printed report of an invocation (also again from the records)
  steady           MODE=steady: the open loop rate by rate, the SLO capacity, its report
  steady_figures   MODE=steady's figures of one run (Herald's or a peer's) and the SLO test
  fanout           MODE=fanout: the tenant's targets and subscriptions, its accepts, its figures
  retention        make bench-retention: an old day of jobs, dropped during the window on one side
  cli              main: the checks, the lock, the interleaved rounds and the records

Nothing here is imported from outside bench/; the modules are split by what they hold, not to
be reused, so that none grows past the repository's 400 lines.
"""
