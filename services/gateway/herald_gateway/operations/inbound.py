"""A tenant's inbound provider webhooks as the ledger keeps them: the verification material per
provider, the provider events of a job, the billing history. (What the material is, and how a
request is verified, is the verifier's and `herald.inbound_keys`'.)"""

from __future__ import annotations

from herald.ids import TenantId, parse_id
from herald.v1 import ledger_inbound_pb2
from herald_gateway.errors import NotFound, ask
from herald_gateway.operations.base import OperationsBase

INBOUND = "inbound configuration"


class InboundOperations(OperationsBase):
    async def put_inbound_config(
        self, tenant_id: TenantId, provider: str, material: bytes, public_info: str
    ) -> ledger_inbound_pb2.InboundConfig:
        request = ledger_inbound_pb2.PutInboundConfigRequest(
            tenant_id=tenant_id, provider=provider, material=material, public_info=public_info
        )
        config: ledger_inbound_pb2.InboundConfig = (
            await ask(self.ledger.inbound.PutInboundConfig(request), INBOUND)
        ).config
        return config

    async def list_inbound_configs(self, tenant_id: TenantId) -> list[ledger_inbound_pb2.InboundConfig]:
        request = ledger_inbound_pb2.ListInboundConfigsRequest(tenant_id=tenant_id)
        return list((await ask(self.ledger.inbound.ListInboundConfigs(request), INBOUND)).configs)

    async def delete_inbound_config(self, tenant_id: TenantId, provider: str) -> None:
        request = ledger_inbound_pb2.DeleteInboundConfigRequest(tenant_id=tenant_id, provider=provider)
        await ask(self.ledger.inbound.DeleteInboundConfig(request), INBOUND)

    async def job_events(self, tenant_id: TenantId, job_id: str) -> list[ledger_inbound_pb2.ProviderEvent]:
        if parse_id(job_id) is None:
            raise NotFound("job not found")
        request = ledger_inbound_pb2.ListJobEventsRequest(tenant_id=tenant_id, job_id=job_id)
        return list((await ask(self.ledger.inbound.ListJobEvents(request), "job")).events)

    async def billing_events(self, tenant_id: str) -> list[ledger_inbound_pb2.ProviderEvent]:
        request = ledger_inbound_pb2.ListBillingEventsRequest(tenant_id=tenant_id)
        return list((await ask(self.ledger.inbound.ListBillingEvents(request), "billing")).events)
