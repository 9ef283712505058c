"""What the gateway reads from a call's metadata."""

from __future__ import annotations

from contextvars import ContextVar

from herald.grpcio.context import Context

# The RPC being served (set by `grpc.errors.answers_errors` around each method): the name its scope is looked up by.
CURRENT_RPC: ContextVar[str] = ContextVar("herald_current_rpc", default="")


def authorization(context: Context) -> str | None:
    """The `authorization` metadata: `Bearer <api key>` or the operator token, as on HTTP."""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            return value
    return None
