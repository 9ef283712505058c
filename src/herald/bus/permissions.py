"""Who may do what on the bus: one NATS user per service, each allowed only the subjects its code uses.

Without this, anyone who reaches NATS reads every tenant's queued work and publishes events the
router fans out. With it, a sender cannot publish intake events, the gateway cannot read work,
and no service reads another's replies: every user's request inbox is `_INBOX.<user>` (the
services connect with that inbox prefix, `herald.bus.connection`), and only that user may
subscribe under it.

The grants are written from what the code does, by kind:
- a stream it ensures (`ensure_streams`, every service but the gateway at start): its INFO,
  CREATE and UPDATE API subjects;
- a durable consumer it pulls from: the consumer's CREATE, INFO and MSG.NEXT subjects and its
  acknowledgements (`$JS.ACK.<stream>.<durable>.>`); the senders' lane consumers are named one
  by one (`herald.bus.fair.lane_durable`), so a webhook sender cannot pull email work;
- a KV bucket or object store it owns: every API subject naming its stream, its flow control
  and acknowledgements, and its data subjects (`$KV.<bucket>.>`, `$O.<bucket>.>`);
- core subjects: the work, dead-letter, inbound and intake subjects it publishes, the control
  topics it follows or announces;
- the ledger alone may purge streams and the rate and pacing buckets, for a tenant's erasure
  and, in the work stream, for the work its consumers acknowledged.

`herald up` writes these into its embedded nats-server's configuration; the Kubernetes NATS
values (deploy/k8s/nats-values.yaml) hold the same, generated from here (`herald nats-permissions`)
and checked against it by the tests. `intake` is the user for internal backends that publish
events (`<prefix>.intake.events.<tenant>`) and nothing else; only `ledger` publishes Herald's
own events to tenants (`<prefix>.intake.operational.<tenant>`); `admin` may do anything
(operators' tools).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from herald.bus.fair import lane_durable
from herald.bus.subjects import PRIORITY_TOKENS, WorkClass

SERVICES = ("ledger", "router", "gateway", "webhook-sender", "email-sender", "verifier")
INTAKE_USER = "intake"
ADMIN_USER = "admin"
USERS = (*SERVICES, INTAKE_USER, ADMIN_USER)
API = "$JS.API"


def inbox_prefix(user: str) -> str:
    """The request inbox of `user`'s connections; only `user` may subscribe under it."""
    return f"_INBOX.{user}"


@dataclass
class Grants:
    publish: list[str] = field(default_factory=list)
    subscribe: list[str] = field(default_factory=list)

    def add(self, publish: Iterable[str] = (), subscribe: Iterable[str] = ()) -> Grants:
        self.publish += [s for s in publish if s not in self.publish]
        self.subscribe += [s for s in subscribe if s not in self.subscribe]
        return self

    def as_config(self) -> dict[str, dict[str, list[str]]]:
        return {"publish": {"allow": list(self.publish)}, "subscribe": {"allow": list(self.subscribe)}}


def _stream_name(prefix: str, suffix: str) -> str:
    """As `Settings.stream_name`."""
    return f"{prefix}_{suffix}".upper().replace(".", "_").replace("-", "_")


def _ensures(stream: str) -> list[str]:
    return [f"{API}.STREAM.{verb}.{stream}" for verb in ("INFO", "CREATE", "UPDATE")]


def _consumes(stream: str, durable: str) -> list[str]:
    return [
        f"{API}.CONSUMER.CREATE.{stream}.{durable}",
        f"{API}.CONSUMER.CREATE.{stream}.{durable}.>",
        f"{API}.CONSUMER.DURABLE.CREATE.{stream}.{durable}",
        f"{API}.CONSUMER.INFO.{stream}.{durable}",
        f"{API}.CONSUMER.MSG.NEXT.{stream}.{durable}",
        f"$JS.ACK.{stream}.{durable}.>",
    ]


def _owns_bucket(stream: str, data: str) -> list[str]:
    """A KV bucket or object store (stream `stream`, data subjects `data`), used whole."""
    return [
        f"{API}.*.*.{stream}",
        f"{API}.*.*.{stream}.>",
        f"{API}.STREAM.MSG.*.{stream}",
        # An object's chunks are read by a consumer nats-py places by looking the stream up by
        # subject: the names of the streams, never their content.
        f"{API}.STREAM.NAMES",
        f"{API}.DIRECT.GET.{stream}",
        f"{API}.DIRECT.GET.{stream}.>",
        f"{API}.CONSUMER.MSG.NEXT.{stream}.>",
        f"$JS.FC.{stream}.>",
        f"$JS.ACK.{stream}.>",
        data,
    ]


def _reads_depth(stream: str) -> list[str]:
    """Depth and lag, never a message: the stream's and its consumers' info."""
    return [f"{API}.STREAM.INFO.{stream}", f"{API}.CONSUMER.LIST.{stream}", f"{API}.CONSUMER.NAMES.{stream}"]


def _lanes(work_class: WorkClass, lanes: int) -> list[str]:
    return [lane_durable(work_class, p, lane) for p in PRIORITY_TOKENS.values() for lane in range(lanes)]


def permissions(prefix: str = "herald", lanes: int = 16) -> dict[str, Grants]:
    """Each user's grants for a deployment whose bus prefix is `prefix` (HERALD_BUS_PREFIX) and
    whose fairness lanes number `lanes` (HERALD_FAIRNESS_LANES)."""
    work, dlq, inbound, intake = (_stream_name(prefix, s) for s in ("work", "dlq", "inbound", "intake"))
    payloads, rate, pace = (_stream_name(prefix, s) for s in ("payloads", "rate", "target_pace"))
    control = f"{prefix}.control"
    shared_streams = [s for stream in (work, dlq, inbound) for s in _ensures(stream)]
    grants = {user: Grants([f"{API}.INFO"], [f"{inbox_prefix(user)}.>"]) for user in USERS if user != ADMIN_USER}

    grants["ledger"].add(
        [
            *shared_streams,
            f"{prefix}.work.>",
            f"{prefix}.intake.operational.*",  # Herald's own events to tenants (herald_ledger.operational)
            f"{control}.>",
            f"{API}.STREAM.MSG.DELETE.{dlq}",  # a dead letter retried leaves the stream
            *_owns_bucket(f"OBJ_{payloads}", f"$O.{payloads}.>"),
            # A tenant's erasure purges its subjects (herald.bus.erasure), nothing else of these;
            # the work its consumers acknowledged leaves the work stream (herald.bus.acknowledged).
            *(f"{API}.STREAM.PURGE.{s}" for s in (work, dlq, inbound, intake, f"KV_{rate}", f"KV_{pace}")),
            f"{API}.CONSUMER.LIST.{work}",
        ],
        [f"{control}.deliveries"],
    )
    grants["router"].add(
        [
            *shared_streams,
            *_ensures(intake),
            *_consumes(intake, "router-intake"),
            *_reads_depth(work),
            *_reads_depth(dlq),
        ],
        [f"{control}.subscriptions"],
    )
    grants["gateway"].add(
        [
            f"{control}.intake",
            *(s for stream in (intake, work, dlq, inbound) for s in _reads_depth(stream)),
            # The operators' dead-letter page reads an entry by its sequence.
            f"{API}.STREAM.MSG.GET.{dlq}",
            *_owns_bucket(f"KV_{rate}", f"$KV.{rate}.>"),
        ],
        [f"{control}.apikeys", f"{control}.tenants"],
    )
    grants["webhook-sender"].add(
        [
            *shared_streams,
            *(s for durable in _lanes(WorkClass.WEBHOOK, lanes) for s in _consumes(work, durable)),
            f"{prefix}.dlq.{WorkClass.WEBHOOK}.*",
            *_owns_bucket(f"KV_{pace}", f"$KV.{pace}.>"),
            *_owns_bucket(f"OBJ_{payloads}", f"$O.{payloads}.>"),
        ],
        [
            f"{control}.{topic}"
            for topic in ("webhook_secrets", "subscriptions", "webhook_settings", "intake", "tenants")
        ],
    )
    email_classes = (WorkClass.EMAIL, WorkClass.PLATFORM_EMAIL)
    grants["email-sender"].add(
        [
            *shared_streams,
            *(s for c in email_classes for durable in _lanes(c, lanes) for s in _consumes(work, durable)),
            *(f"{prefix}.dlq.{c}.*" for c in email_classes),
        ],
        [f"{control}.providers", f"{control}.intake", f"{control}.tenants"],
    )
    grants["verifier"].add([*shared_streams, f"{prefix}.inbound.>"], [f"{control}.inbound"])
    grants[INTAKE_USER].add([f"{prefix}.intake.events.*"])
    grants[ADMIN_USER] = Grants([">"], [">"])
    return grants
