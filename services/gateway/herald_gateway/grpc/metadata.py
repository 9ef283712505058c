"""What the gateway reads from a call's metadata."""

from __future__ import annotations

from herald.grpcio.context import Context


def authorization(context: Context) -> str | None:
    """The `authorization` metadata: `Bearer <api key>` or the operator token, as on HTTP."""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            return value
    return None
