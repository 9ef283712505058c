"""Large payloads travel beside the work message, not in it (the claim-check pattern).

NATS refuses messages over its max payload (1 MB by default) and large messages slow
every consumer of a stream, so a body above `inline_max_bytes` is put in the JetStream
object store under the job id and the work message carries only that name. The sender
fetches it right before the call and removes it once the job has ended; the ledger keeps
the body, so a manual retry republishes (and re-stores) it.
"""

from __future__ import annotations

import logging

from nats.js import JetStreamContext
from nats.js.errors import NotFoundError, ObjectNotFoundError
from nats.js.object_store import ObjectStore

from herald.bus.streams import keep_replicated

log = logging.getLogger("herald.bus.payloads")


class PayloadStore:
    def __init__(self, js: JetStreamContext, bucket: str, replicas: int = 1) -> None:
        self.js = js
        self.bucket = bucket
        self.replicas = replicas
        self._store: ObjectStore | None = None

    async def _open(self) -> ObjectStore:
        if self._store is None:
            try:
                store = await self.js.object_store(self.bucket)
            except NotFoundError:
                store = await self.js.create_object_store(self.bucket, replicas=self.replicas)
            else:
                await keep_replicated(self.js, f"OBJ_{self.bucket}", self.replicas)
            self._store = store
        return self._store

    async def put(self, name: str, data: bytes) -> None:
        await (await self._open()).put(name, data)

    async def get(self, name: str) -> bytes:
        result = await (await self._open()).get(name)
        return bytes(result.data or b"")

    async def names(self) -> set[str]:
        """The objects stored now (deleted ones left out)."""
        try:
            found = await (await self._open()).list(ignore_deletes=True)
        except NotFoundError:  # the store is empty
            return set()
        return {info.name for info in found if info.name}

    async def delete(self, name: str) -> None:
        """Best effort: a payload left behind costs space, not correctness (it is rewritten
        under the same name if the job runs again)."""
        try:
            await (await self._open()).delete(name)
        except (ObjectNotFoundError, NotFoundError):
            pass
        except Exception as error:
            log.warning("could not remove a large payload", extra={"object": name, "error": repr(error)})
