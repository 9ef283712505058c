"""One typed settings object per process, read from the environment.

Every service reads the same `Settings`; a variable that only one service uses
still lives here so that `herald up`, the Kubernetes ConfigMap and the tests
have one list to fill in. Names are `HERALD_*`, except `NATS_URL` and
`DATABASE_URL`, which follow the convention every tool already knows.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from herald.bus.subjects import Subjects
from herald.plans import plan_days
from herald.secrets import KeyRing, mask_url_passwords

Retention = Literal["workqueue", "limits", "interest"]
# Settings holding URLs that may carry a password.
_URL_FIELDS = frozenset({"database_url", "nats_url"})

_NATS_SCHEMES = ("nats", "tls", "ws", "wss")


def nats_servers(value: str) -> list[str]:
    """The servers of a NATS URL, which may be a comma-separated list as every NATS client and tool
    takes it (`nats://a:4222,nats://b:4222`); a server without a scheme is taken as `nats://`.

    Each is checked here, so a typo stops the process at start with the setting's name instead of
    a reconnect loop that never succeeds; credentials in a URL (`nats://user:pass@host`) are kept.
    """
    servers = [part.strip() for part in value.split(",") if part.strip()]
    if not servers:
        raise ValueError("NATS_URL names no server")
    checked = []
    for server in servers:
        url = server if "://" in server else f"nats://{server}"
        parts = urlsplit(url)
        if parts.scheme not in _NATS_SCHEMES:
            raise ValueError(f"NATS_URL: scheme {parts.scheme!r} is not one of {', '.join(_NATS_SCHEMES)}")
        try:
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError as error:
            raise ValueError(f"NATS_URL: a server has an invalid port ({error})") from None
        if not parts.hostname or parts.path not in ("", "/") or parts.query or parts.fragment:
            raise ValueError("NATS_URL: each server is [scheme://][user:password@]host[:port], comma-separated")
        checked.append(url)
    if len({urlsplit(url).scheme in ("ws", "wss") for url in checked}) > 1:
        raise ValueError("NATS_URL: WebSocket and plain or TLS servers cannot be mixed in one list")
    return checked


class Settings(BaseSettings):
    # A rejected value is not echoed in the error: NATS_URL and DATABASE_URL may carry passwords.
    model_config = SettingsConfigDict(env_prefix="HERALD_", extra="ignore", hide_input_in_errors=True)

    # Infrastructure.
    # One server or a comma-separated list of them (a cluster's seeds), each
    # [nats|tls|ws|wss://][user:password@]host[:port]; `tls://` requires TLS.
    nats_url: str = Field(default="nats://127.0.0.1:4222", validation_alias=AliasChoices("NATS_URL", "HERALD_NATS_URL"))
    # A secured NATS: a credentials file (user JWT + NKey seed, as `nsc` writes it), a CA bundle
    # to verify the servers with (any set file turns TLS on), and a client certificate and key for
    # servers that verify clients (mutual TLS). Paths to mounted files; the files are read at connect.
    nats_creds_file: str = ""
    # NATS's own user/password authentication, from a file holding `user:password` (what `herald
    # up` writes for each service, and a Kubernetes Secret mounts): the connection also takes
    # `_INBOX.<user>` as its request inbox, the only one that user's permissions let it read
    # (herald.bus.permissions).
    nats_user_file: str = ""
    nats_tls_ca_file: str = ""
    nats_tls_cert_file: str = ""
    nats_tls_key_file: str = ""
    database_url: str = Field(
        default="postgresql://postgres@127.0.0.1:5432/herald",
        validation_alias=AliasChoices("DATABASE_URL", "HERALD_DATABASE_URL"),
    )

    # Bus layout. The prefix isolates one deployment (or one test run) from another
    # sharing the same NATS: it starts every subject and every stream name.
    bus_prefix: str = "herald"
    stream_replicas: int = Field(default=1, ge=1, le=5)
    # The work stream's retention: "workqueue" removes each message as it is acknowledged (at
    # `sync_interval: always`, one sync each); "limits" keeps them until the ledger purges, every
    # `work_purge_interval_s`, what every consumer acknowledged (herald.bus.acknowledged: no sync
    # per acknowledgement, but a message waiting out a retry backoff holds back the purge of its
    # lane). JetStream cannot change an existing stream to or from a work queue: one keeps its own.
    stream_retention: Retention = "workqueue"
    # How the work stream persists (an R1 stream on nats-server 2.12 or later; a replicated one is
    # always "strong"): "async" answers a publish or an acknowledgement before its write reaches
    # the disk, "strong" as the server's sync_interval says (at `always`, two syncs a job, one after
    # the other per stream). The work stream holds nothing the ledger does not: a job's row is
    # committed before its message is published, and a message an OS crash takes back is published
    # again by the reconciler (its job late by `reconcile_queued_after_s`, never lost), so "async"
    # is the default; every other stream (intake, dead letters, KV) stays at the server's setting.
    # JetStream cannot change an existing stream's mode: one keeps its own.
    work_stream_persist: Literal["async", "strong"] = "async"
    work_purge_interval_s: float = Field(default=2.0, gt=0)
    stream_max_age_s: float = Field(default=7 * 24 * 3600, gt=0)
    stream_duplicate_window_s: float = Field(default=120, gt=0)
    # Webhook bodies above this travel in the JetStream object store, not in the work message.
    payload_inline_max_bytes: int = Field(default=256 * 1024, ge=1024, le=900 * 1024)
    # Fair queueing: tenants are hashed onto this many lanes per class and priority.
    # Router and senders must agree; changing it needs the old lanes drained first.
    fairness_lanes: int = Field(default=16, ge=1, le=256)
    # Messages a consumer may hold unacknowledged: what waits out a short delay on the bus counts
    # (a short retry, a bound's hold, a probe waiting for its target's cool-down). What must
    # wait longer leaves the bus: a retry of at least `park_retries_from_s` is acknowledged and
    # held by the ledger until due (herald_ledger.store.parking), as are deliveries a target's
    # open circuit holds beyond its probe (`webhook_park_recheck_s`). 0 parks every retry.
    consumer_max_ack_pending: int = Field(default=50_000, ge=1)
    park_retries_from_s: float = Field(default=60.0, ge=0)

    # This process's listeners (0 = pick a free port; `herald up` sets them).
    grpc_host: str = "127.0.0.1"
    grpc_port: int = 50051
    http_host: str = "127.0.0.1"
    http_port: int = 8080
    # An HTTP client has this long from its first byte to the end of its headers, then this long
    # (a deadline, not an idle timeout) for its body; then it is answered 408 and cut off.
    http_head_timeout_s: float = Field(default=10.0, gt=0)
    http_body_timeout_s: float = Field(default=30.0, gt=0)
    # An idle keep-alive connection is closed after this long. Longer than the idle timeout of
    # whatever reuses connections to Herald (a load balancer: 60 s on AWS's ALB; nginx keeps
    # upstream connections 60 s): a server that closes first races the client's next request
    # on the same connection, which then fails with a reset (uvicorn's own 5 s did, at 600/s).
    http_keep_alive_s: float = Field(default=75.0, gt=0)
    metrics_port: int = 9464

    # The gateway's public gRPC server closes each connection after this long (clients
    # reconnect, and re-authenticate); calls still open on it get the grace, then are cut.
    # 0 turns it off.
    grpc_max_connection_age_s: float = Field(default=600.0, ge=0)
    grpc_max_connection_age_grace_s: float = Field(default=120.0, ge=0)

    # The internal gRPC mesh's mutual TLS (herald.grpcio.mesh): the mesh CA, and this service's
    # certificate and key (PEM files: `herald up` makes them, cert-manager in Kubernetes). Set, the
    # internal servers take only callers presenting a certificate from that CA, and the channels
    # to other services present this one; unset (all three empty), the mesh is plaintext.
    mesh_ca_file: str = ""
    mesh_cert_file: str = ""
    mesh_key_file: str = ""

    # A plaintext listener serving gRPC health only (0: none), beside a mesh port with mutual TLS,
    # for probes that cannot present a certificate (kubelet's gRPC probes).
    health_port: int = Field(default=0, ge=0, le=65535)

    # Where the other services are.
    ledger_addr: str = "127.0.0.1:50061"
    router_addr: str = "127.0.0.1:50062"

    # The operator the ledger makes at start unless one of that name exists (or existed):
    # `<name>:<hex SHA-256 of its token>`; the token itself is never given to a service. Operators
    # are named and each has a token of its own (`herald operator create`); empty: none is made.
    first_operator: str = Field(default="", repr=False)
    # The browser console (herald_gateway.console) seals its session cookies with this key
    # (base64 of 32 bytes), shared by every gateway replica; empty: a random key per process,
    # so sessions end when the gateway restarts and do not cross replicas.
    console_session_key: str = Field(default="", repr=False)

    # Master keys sealing stored secrets: `id:base64(32 bytes)[,id:base64...]`, and the
    # id that seals new secrets (older ids only open). Read by the ledger and the senders.
    master_keys: str = Field(default="", repr=False)
    master_key_id: str = ""

    email_sender_addr: str = "127.0.0.1:50063"
    # The gateway asks a webhook-sender to test a target (POST /v1/webhooks/targets/{id}/test).
    webhook_sender_addr: str = "127.0.0.1:50064"
    # Gateways batch API-key last-used times and write them this often.
    api_key_touch_interval_s: float = Field(default=15.0, gt=0)
    # How long a rotated-out webhook signing secret keeps signing alongside the new one.
    webhook_secret_overlap_s: float = Field(default=24 * 3600, ge=0)

    # Webhook delivery.
    # Calls in flight at once per webhook-sender (async I/O: a waiting call costs a socket and
    # a coroutine, not a thread). 128 lets eight targets at the default per-target bound, or four
    # tenants at their share, run at once; a slow receiver holds at most its bound of them.
    webhook_concurrency: int = Field(default=128, ge=1, le=1000)
    # A target's calls in flight at most (herald.sender.slots), unless the target sets its own
    # `max_in_flight`, which may not exceed `webhook_target_in_flight_max`.
    webhook_target_in_flight: int = Field(default=16, ge=1, le=1000)
    webhook_target_in_flight_max: int = Field(default=64, ge=1, le=1000)
    # A tenant's calls in flight at most, over all its targets (at most webhook_concurrency).
    webhook_tenant_in_flight: int = Field(default=32, ge=1, le=1000)
    # Per-target circuit breaker (herald_webhook_sender.breakers): this many timeouts, failed
    # connections or 5xx answers within the window open it; its target's deliveries then wait
    # on the bus (no call, no attempt spent) for the cool-down, and one probe decides.
    webhook_breaker_failures: int = Field(default=5, ge=1)
    webhook_breaker_window_s: float = Field(default=60.0, gt=0)
    webhook_breaker_cool_down_s: float = Field(default=30.0, gt=0)
    # While a target's circuit is open, one delivery per cool-down waits on the bus to be its
    # probe; the others are parked in the ledger until the target answers or their retry window
    # ends. Every this long (and up to half again) the ledger makes one of a lane's parked jobs
    # due, to be a probe (herald_ledger.parked_lanes).
    webhook_park_recheck_s: float = Field(default=300.0, gt=0)
    # A target that answers slowly builds a backlog behind its bound, which the sender hands back
    # to the bus a while at a time; once that backlog takes longer than this to be called, what
    # it refuses is parked in the ledger until its turn (herald_webhook_sender.parking).
    webhook_park_backlog_s: float = Field(default=30.0, gt=0)
    webhook_timeout_s: float = Field(default=15.0, gt=0)
    # Must exceed the timeout, so a slow receiver is never handed to a second sender.
    webhook_ack_wait_s: float = Field(default=30.0, gt=0)
    # Delays before each retry (about 24 h in all); the job fails after the last one.
    webhook_retry_schedule_s: list[float] = Field(default=[5, 300, 1800, 7200, 18000, 28800, 28800])
    # Each delay moves uniformly within ±this fraction, so retries of many jobs spread out.
    webhook_retry_jitter: float = Field(default=0.1, ge=0, lt=1)
    # A receiver's Retry-After can lengthen a wait up to this, never shorten it.
    webhook_retry_after_max_s: float = Field(default=6 * 3600, ge=0)
    # 4xx answers retried anyway (others fail at once; 410 always stops and disables).
    webhook_retry_statuses: list[int] = Field(default_factory=list)
    # Targets on loopback addresses are refused unless this is set (`herald up` sets it).
    webhook_allow_loopback: bool = False
    # Operator allow-list for targets that would otherwise be refused as non-public:
    # CIDRs, addresses, host names or *.suffix, separated by commas or spaces. Applied when
    # a URL is submitted (gateway) and again when connecting (webhook-sender).
    target_allow: str = ""
    # A subscription target whose every delivery failed for this long (no success since the
    # first failure of the streak) is disabled automatically, with an operational event;
    # 0 never disables.
    webhook_target_disable_after_s: float = Field(default=5 * 24 * 3600, ge=0)
    # How long the webhook-sender keeps a target's rate limit and a tenant's retry schedule
    # (changes also evict them at once through the ledger's change notifications).
    webhook_config_cache_ttl_s: float = Field(default=30.0, ge=0)

    email_concurrency: int = Field(default=5, ge=1, le=1000)
    # One email attempt is a walk over the tenant's providers; these are the delays
    # before walks 2, 3, ... (3 walks by default); after the last, the dead-letter queue.
    email_retry_schedule_s: list[float] = Field(default=[30, 120])
    # One provider call; AckWait must exceed it (the sender renews it between providers).
    email_send_timeout_s: float = Field(default=15.0, gt=0)
    email_ack_wait_s: float = Field(default=60.0, gt=0)
    # How long the sender keeps a tenant's sealed provider configs (changes also evict them).
    email_provider_cache_ttl_s: float = Field(default=30.0, ge=0)
    # Per-tenant, per-provider circuit breaker: this many transient failures within the
    # window open it; it skips the provider for the cool-down, then lets one probe through.
    email_breaker_failures: int = Field(default=5, ge=1)
    email_breaker_window_s: float = Field(default=60.0, gt=0)
    email_breaker_cool_down_s: float = Field(default=30.0, gt=0)
    # The operator's private CA bundle (a mounted file) for tenants' SMTP relays.
    email_smtp_ca_file: str = ""

    # Platform email (Herald's own mail: quota warnings, key-created notices, dead-letter
    # alerts to HERALD_ALERT_EMAIL_TO): its own work class, always CRITICAL, shorter
    # backoff, one provider configured here. Empty provider: none is sent.
    platform_email_provider: Literal["", "sendgrid", "resend", "postmark", "smtp"] = ""
    platform_email_api_key: str = Field(default="", repr=False)
    platform_email_base_url: str = ""
    platform_email_from: str = "Herald <herald@localhost>"
    platform_smtp_host: str = ""
    platform_smtp_port: int = Field(default=587, ge=1, le=65535)
    platform_smtp_username: str = ""
    platform_smtp_password: str = Field(default="", repr=False)
    platform_smtp_tls_mode: Literal["starttls", "implicit", "none"] = "starttls"
    platform_email_retry_schedule_s: list[float] = Field(default=[5, 30])
    platform_email_concurrency: int = Field(default=2, ge=1, le=100)

    # Operator alerts when jobs reach the dead-letter queue: a Slack-compatible incoming
    # webhook and/or an operational webhook (JSON). The first goes out at once, then at
    # most one summary per window (per sender process).
    alert_slack_url: str = Field(default="", repr=False)
    alert_webhook_url: str = Field(default="", repr=False)
    alert_window_s: float = Field(default=300.0, gt=0)
    # And/or by platform email, to these addresses (comma-separated), when a platform email
    # provider is configured; the same window applies. Dead letters of platform email
    # itself are not mailed (the platform provider is what failed).
    alert_email_to: str = ""

    # Jobs the bus never acknowledged are republished, then failed after this long.
    outbox_scan_interval_s: float = Field(default=2.0, gt=0)
    outbox_republish_after_s: float = Field(default=5.0, gt=0)
    outbox_give_up_after_s: float = Field(default=900.0, gt=0)

    # The reconciler (herald_ledger.reconciler): a QUEUED job the bus has not acted on within
    # `reconcile_queued_after_s` of its commit, or within `reconcile_retry_grace_s` after its
    # retry was due, is published again with a fresh message id (the bus lost it: a purged,
    # deleted or expired stream). A live message republished costs a skipped copy, never a
    # second delivery, so the bounds trade the time to recover against copies of jobs that
    # merely wait in a backlog longer than the bound. At most `reconcile_batch` a statement.
    reconcile_interval_s: float = Field(default=5.0, gt=0)
    reconcile_queued_after_s: float = Field(default=300.0, gt=0)
    reconcile_retry_grace_s: float = Field(default=120.0, gt=0)
    reconcile_batch: int = Field(default=500, ge=1, le=10_000)

    # Inbound provider webhooks (the verifier). Payment providers are the platform's own accounts: Paystack's
    # secret key (HMAC-SHA512 of the body) and Polar's webhook secret (Standard Webhooks, used as is).
    paystack_secret_key: str = Field(default="", repr=False)
    polar_webhook_secret: str = Field(default="", repr=False)
    # What each payment buys, by the provider's own identifier (never by checkout metadata):
    # `identifier=plan:amount:currency` entries (amount in minor units), separated by commas or
    # spaces. Paystack: plan codes (PLN_...); Polar: product ids. See docs/operations.md.
    paystack_plans: str = ""
    polar_products: str = ""
    # A body larger than this is refused with 413 before it is read in full.
    inbound_max_body_bytes: int = Field(default=1024 * 1024, ge=1024, le=32 * 1024 * 1024)
    # Timestamped schemes (SendGrid, Resend, Polar) refuse requests further than this from now.
    inbound_tolerance_s: float = Field(default=300.0, gt=0, le=3600)
    # How long the verifier keeps a tenant's sealed verification material (a miss is kept as briefly).
    inbound_key_cache_ttl_s: float = Field(default=10.0, ge=0)

    # The ledger's housekeeping runs this often: idempotency keys past their 24 hours are
    # deleted, plans whose paid period ended after a cancellation go back to free.
    ledger_maintenance_interval_s: float = Field(default=60.0, gt=0)
    # How often the ledger looks for a filling day partition that has doubled since it was last
    # analyzed, and analyzes it (herald_ledger.statistics: a plan cached while the day was nearly
    # empty reads the whole day until then).
    partition_stats_interval_s: float = Field(default=5.0, gt=0)
    # Retention per plan, in days (`plan=days,...`; herald_ledger.retention): how long rows (jobs
    # with their attempts and history, events) and payloads (bodies, event payloads, attempts'
    # excerpts, idempotency answers) are kept. An operator's override per tenant wins
    # (`herald tenant set-limits --row-retention-days/--payload-retention-days`).
    row_retention_days: str = "free=7,indie=30,startup=90"
    payload_retention_days: str = "free=7,indie=30,startup=90"
    # Rows per statement of retention's batches (payload expiry, a shorter retention's deletes), and
    # how often a round runs (one ledger replica at a time; each round also makes the coming days'
    # partitions, seven days ahead, so an interval of up to a day is safe).
    retention_batch: int = Field(default=1_000, ge=1, le=100_000)
    retention_interval_s: float = Field(default=600.0, gt=0, le=86_400)

    # When the shared rate-limit state (NATS KV) is unreachable: refuse (503) or admit.
    rate_limit_fail_open: bool = False
    # API keys are cached by the gateway for this long.
    auth_cache_ttl_s: float = Field(default=30.0, ge=0)

    log_level: str = "INFO"
    shutdown_grace_s: float = Field(default=20.0, ge=0)

    @field_validator("nats_url")
    @classmethod
    def _nats_url_is_a_server_list(cls, value: str) -> str:
        nats_servers(value)
        return value

    @field_validator("row_retention_days", "payload_retention_days")
    @classmethod
    def _retention_names_every_plan(cls, value: str) -> str:
        plan_days(value)
        return value

    @model_validator(mode="after")
    def _nats_client_certificate_has_its_key(self) -> Settings:
        if bool(self.nats_tls_cert_file) != bool(self.nats_tls_key_file):
            raise ValueError("HERALD_NATS_TLS_CERT_FILE and HERALD_NATS_TLS_KEY_FILE are set together or not at all")
        return self

    @model_validator(mode="after")
    def _mesh_tls_is_whole(self) -> Settings:
        if len({bool(self.mesh_ca_file), bool(self.mesh_cert_file), bool(self.mesh_key_file)}) > 1:
            raise ValueError(
                "HERALD_MESH_CA_FILE, HERALD_MESH_CERT_FILE and HERALD_MESH_KEY_FILE are set together or not at all"
            )
        return self

    @model_validator(mode="after")
    def _ack_wait_outlasts_the_http_timeout(self) -> Settings:
        if self.webhook_ack_wait_s <= self.webhook_timeout_s:
            raise ValueError(
                "HERALD_WEBHOOK_ACK_WAIT_S must exceed HERALD_WEBHOOK_TIMEOUT_S, or a slow receiver "
                "would be handed to a second sender while the first still waits"
            )
        return self

    @model_validator(mode="after")
    def _email_ack_wait_outlasts_one_provider_call(self) -> Settings:
        if self.email_ack_wait_s <= self.email_send_timeout_s:
            raise ValueError(
                "HERALD_EMAIL_ACK_WAIT_S must exceed HERALD_EMAIL_SEND_TIMEOUT_S, or a slow provider "
                "would hand the email to a second sender while the first still waits"
            )
        return self

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """repr() and str() leave out the secrets (fields with repr=False) and mask the passwords
        of the database and NATS URLs, so a settings object in a log line or a traceback leaks
        neither."""
        for name, value in super().__repr_args__():
            yield name, mask_url_passwords(value) if name in _URL_FIELDS and isinstance(value, str) else value

    def key_ring(self) -> KeyRing:
        return KeyRing.parse(self.master_keys, self.master_key_id)

    def subjects(self) -> Subjects:
        return Subjects(self.bus_prefix, self.fairness_lanes)

    def alert_email_recipients(self) -> list[str]:
        return [address.strip() for address in self.alert_email_to.split(",") if address.strip()]

    @property
    def payload_bucket(self) -> str:
        return self.stream_name("payloads")

    def stream_name(self, suffix: str) -> str:
        return f"{self.bus_prefix}_{suffix}".upper().replace(".", "_").replace("-", "_")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
