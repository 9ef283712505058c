"""Header names a tenant may not set: the gateway refuses them at the door and the senders
never pass them on, from the same sets."""

from __future__ import annotations

# Webhook headers Herald sets itself or that HTTP reserves for the connection.
RESERVED_WEBHOOK_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer", "keep-alive"}
)
RESERVED_WEBHOOK_HEADER_PREFIXES = ("webhook-", "x-webhook-", "x-herald-")
# Email headers the message's own fields set, or that providers set themselves and refuse from
# callers (SendGrid answers 400 for these): a custom header may not name one.
RESERVED_EMAIL_HEADERS = frozenset(
    {
        "from",
        "to",
        "cc",
        "bcc",
        "reply-to",
        "subject",
        "date",
        "message-id",
        "mime-version",
        "content-type",
        "content-transfer-encoding",
        "received",
        "dkim-signature",
        "return-path",
        "x-sg-id",
        "x-sg-eid",
    }
)
