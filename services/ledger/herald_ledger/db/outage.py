"""Errors that mean the database is away (stopped, restarting, or the connection dropped), not
that the request was wrong: the ledger answers them UNAVAILABLE, which every caller already
treats as "retry shortly" (a sender hands its messages back, the gateway answers 503), rather
than UNKNOWN with a traceback logged for each call while PostgreSQL restarts."""

from __future__ import annotations

from asyncpg.exceptions import InterfaceError
from sqlalchemy.exc import DBAPIError

REASON = "the ledger's database is unavailable; retry shortly"
# SQLSTATE class 08, "connection exception"; and the server shutting down or still starting
# (admin_shutdown, crash_shutdown, cannot_connect_now).
_CONNECTION_EXCEPTION = "08"
_SERVER_AWAY = frozenset({"57P01", "57P02", "57P03"})


def database_unreachable(error: Exception) -> str | None:
    """`REASON` if `error`, or an error it was raised from, says the database could not be
    reached or dropped the connection; None for any other error."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [error]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, ConnectionError):
            return REASON
        # A pooled connection the server dropped (SQLAlchemy's asyncpg dialect tells it the same way).
        if isinstance(current, InterfaceError) and "connection is closed" in str(current):
            return REASON
        if isinstance(current, DBAPIError):
            if current.connection_invalidated:
                return REASON
            pending.append(current.orig)
        sqlstate = getattr(current, "sqlstate", None)
        if isinstance(sqlstate, str) and (sqlstate.startswith(_CONNECTION_EXCEPTION) or sqlstate in _SERVER_AWAY):
            return REASON
        pending += [current.__cause__, current.__context__]
    return None
