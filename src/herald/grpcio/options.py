"""Channel options shared by servers and clients."""

from __future__ import annotations

# Webhook payloads may be several MB; leave headroom over the 5 MB payload limit.
MAX_MESSAGE_BYTES = 16 * 1024 * 1024


def max_connection_age(age_s: float, grace_s: float) -> list[tuple[str, int]]:
    """Server options that close every connection after `age_s` (GOAWAY: the client reconnects,
    through its resolver and authentication again) and cut the calls still open on it after a
    further `grace_s`. For the public gRPC front door: no connection, nor the stream on it,
    lives forever on what was true when it opened. 0 turns it off."""
    if age_s <= 0:
        return []
    return [
        ("grpc.max_connection_age_ms", int(age_s * 1000)),
        ("grpc.max_connection_age_grace_ms", int(grace_s * 1000)),
    ]


# The deadline of a call on a job's path between the services (the gateway's SubmitJobs, which the
# router passes on to CreateJobs; a sender's ledger calls: starts, records, and the reads a delivery
# is prepared with, a tenant's signing keys, settings and provider credentials). One that never
# answered would hold its caller for good: with one call in flight, every request or job behind it;
# in a sender, a job whose message the fetcher keeps in progress, so the bus never redelivers it.
# A caller that gives up answers 503 (the gateway) or hands its messages back to the bus (a sender).
# Set per call: a channel-wide default (a service config's methodConfig timeout of 2 s) failed
# calls after 0.02-0.9 s in grpcio 1.85, and capped the longer deadlines calls set themselves.
CALL_DEADLINE_S = 30.0

CHANNEL_OPTIONS: list[tuple[str, int]] = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
]
