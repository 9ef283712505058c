"""Values PostgreSQL refuses as data: the caller's mistake, not the ledger's.

The gateway refuses them at the door (NUL in strings, integers beyond their columns), but a
field it does not know of, or a caller other than the gateway, would otherwise meet UNKNOWN
and be told by the gateway to retry (503) a request that can never succeed.
"""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError

# SQLSTATE class 22, "data exception": the statement was fine, a value in it was not.
_DATA_EXCEPTION = "22"
_MEANINGS = {
    "22021": "a string contains a NUL (U+0000) character, which cannot be stored",
    "22P05": "a string contains a NUL (U+0000) character, which cannot be stored",
    "22003": "a number is out of range",
    "22001": "a string is too long",
}


def unstorable_value(error: Exception) -> str | None:
    """Why PostgreSQL refused a value of the request, or None for any other error. The
    server's own message is not passed on: it may quote stored data."""
    # Through SQLAlchemy (a DBAPIError around the driver's) or from the driver itself (a
    # statement run on the asyncpg connection, store.driver): both carry the SQLSTATE.
    cause = error.orig if isinstance(error, DBAPIError) else error
    sqlstate = str(getattr(cause, "sqlstate", None) or "")
    if not sqlstate.startswith(_DATA_EXCEPTION):
        return None
    return _MEANINGS.get(sqlstate, f"a value cannot be stored (SQLSTATE {sqlstate})")
