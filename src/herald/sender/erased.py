"""Tenants erased while this sender runs, heard from the ledger's notice (`<prefix>.control.tenants`
with `erased`, herald_ledger.rpc.erasure).

A sender asks the ledger whether a job may start before it waits for a call slot, so a job can
have started and still wait for its slot when its tenant is erased; the loop checks this set once
the slot is its own, right before the call, and hands such a job back without calling (its next
start is refused: the job is gone). The set only grows: erasures are rare, ids are small.
"""

from __future__ import annotations

import logging

import orjson
from nats.aio.msg import Msg

from herald.sender.states import HAND_BACK_S, HandBack


class ErasedTenants:
    def __init__(self) -> None:
        self._ids: set[str] = set()

    def __contains__(self, tenant_id: object) -> bool:
        return tenant_id in self._ids

    def refuse(self, tenant_id: str) -> None:
        """Raises HandBack for a job of an erased tenant."""
        if tenant_id in self._ids:
            raise HandBack("its tenant was erased", delay_s=HAND_BACK_S, level=logging.INFO)

    async def on_notice(self, message: Msg) -> None:
        try:
            fields = orjson.loads(message.data)
        except orjson.JSONDecodeError:
            return
        if isinstance(fields, dict) and fields.get("erased") and fields.get("tenant_id"):
            self._ids.add(str(fields["tenant_id"]))
