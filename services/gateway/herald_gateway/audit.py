"""The audit log, from the gateway's side: who made a change (an API key, by id and name, or a
named operator), what (the route template or the RPC, the resource's id, the fields the call
set, never a secret's value), when (the ledger's clock) and from which address.

Both surfaces record through `Auditor.record` once a state-changing call has succeeded: HTTP
through `herald_gateway.http.audit` (a plain ASGI layer), gRPC through the servicers' error
wrapper (`herald_gateway.grpc.errors`). Submissions (sending webhooks, emails, events, running
a job or a target's failures again: the `send` scope) are work, not changes of configuration,
and are not recorded one by one; neither are reads. A failed call changed nothing: not recorded.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson

from herald.grpcio.ledger import Ledger
from herald.v1 import common_pb2, ledger_tenants_pb2
from herald_gateway.errors import ask
from herald_gateway.scopes import RPC_TWINS, SEND, route_scope

log = logging.getLogger("herald.gateway.audit")

WITHHELD = "[secret]"
# A field whose name holds one of these carries a secret (an API key, a provider's password or
# token, a signing secret, a header's value): its value is never recorded, only that it was set.
SECRET_WORDS = ("key", "secret", "password", "token", "credential", "authorization", "headers")
MAX_VALUE_CHARS = 500


@dataclass(frozen=True)
class Actor:
    kind: str  # key | operator
    id: str
    name: str
    # The tenant the key belongs to; an operator's change names its tenant per call.
    tenant_id: str = ""


# Changes the ledger records itself, in the change's own transaction: a tenant's erasure, whose
# entry names the tenant only by hash (herald_ledger.store.erasure). The gateway hands it the
# entry's actor, action and address (`entry_by`) and records nothing after.
SELF_RECORDED_ROUTES = frozenset({("DELETE", "/admin/v1/tenants/{tenant_id}")})
SELF_RECORDED_RPCS = frozenset({"EraseTenant"})

# Who the current call is (set where it is authenticated), for the gRPC surface's recording.
CURRENT_ACTOR: ContextVar[Actor | None] = ContextVar("herald_current_actor", default=None)


def _is_secret(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in SECRET_WORDS)


def _without_userinfo(value: str) -> str:
    """A URL's user:password part is a credential too."""
    if "@" not in value or "://" not in value:
        return value
    try:
        parts = urlsplit(value)
    except ValueError:
        return WITHHELD
    if parts.username is None and parts.password is None:
        return value
    host = parts.hostname or ""
    netloc = f"{WITHHELD}@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def redacted(value: Any, name: str = "") -> Any:
    """`value` as the log keeps it: secrets replaced by "[secret]", long strings cut."""
    if name and _is_secret(name) and value not in (None, "", [], {}):
        return WITHHELD
    if isinstance(value, Mapping):
        return {str(k): redacted(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(v) for v in value[:50]]
    if isinstance(value, str):
        return _without_userinfo(value)[:MAX_VALUE_CHARS]
    return value


def audited_route(method: str, path: str) -> bool:
    """Whether a call to this route (its template) is a change the log records."""
    if method in ("GET", "HEAD", "OPTIONS") or (method, path) in SELF_RECORDED_ROUTES:
        return False
    if path.startswith("/admin/v1/"):
        return True
    if path.startswith("/v1/"):
        try:
            return route_scope(method, path) != SEND
        except KeyError:
            return True
    return False


def audited_rpc(service: str, rpc: str) -> bool:
    if service == "NotificationService":
        twin = RPC_TWINS.get(rpc)
        return twin is not None and audited_route(*twin)
    return service == "AdminService" and not rpc.startswith(("Get", "List")) and rpc not in SELF_RECORDED_RPCS


def entry_by(actor: Actor, action: str, address: str) -> common_pb2.AuditEntry:
    """The who, what and where of a change the ledger records itself (SELF_RECORDED_*)."""
    return common_pb2.AuditEntry(
        actor_kind=actor.kind, actor_id=actor.id, actor_name=actor.name, action=action, address=address
    )


class Auditor:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    async def record(
        self, actor: Actor, action: str, tenant_id: str, resource_id: str, changes: Mapping[str, Any], address: str
    ) -> None:
        """Appends one entry. The change is already made: a failure here is logged (with what
        would have been recorded, minus the values) and the caller still gets its answer."""
        entry = common_pb2.AuditEntry(
            tenant_id=tenant_id,
            actor_kind=actor.kind,
            actor_id=actor.id,
            actor_name=actor.name,
            action=action,
            resource_id=resource_id,
            changes_json=orjson.dumps(redacted(dict(changes))).decode(),
            address=address,
        )
        try:
            await ask(
                self.ledger.tenants.AppendAuditEntry(ledger_tenants_pb2.AppendAuditEntryRequest(entry=entry)),
                "audit log",
            )
        except Exception as error:
            log.error(
                "audit entry not recorded",
                extra={"action": action, "actor": actor.name, "resource_id": resource_id, "error": repr(error)},
            )

    async def page(self, tenant_id: str, page_size: int, cursor: str) -> tuple[list[common_pb2.AuditEntry], str]:
        found = await ask(
            self.ledger.tenants.ListAuditEntries(
                ledger_tenants_pb2.ListAuditEntriesRequest(tenant_id=tenant_id, page_size=page_size, cursor=cursor)
            ),
            "audit log",
        )
        return list(found.entries), found.next_cursor
