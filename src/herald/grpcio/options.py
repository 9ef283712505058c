"""Channel options shared by servers and clients."""

from __future__ import annotations

# Webhook payloads may be several MB; leave headroom over the 5 MB payload limit.
MAX_MESSAGE_BYTES = 16 * 1024 * 1024

CHANNEL_OPTIONS: list[tuple[str, int]] = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
]
