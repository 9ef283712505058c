"""The gateway's operations: what each request does, once, for the HTTP and the gRPC surfaces
alike. One module per resource; each raises `GatewayError`s (herald_gateway.errors) and asks the
ledger, the router and the email-sender through `ask`, which turns their statuses into those
errors. A surface only reads its request, calls one operation and writes its answer."""

from __future__ import annotations

from herald_gateway.operations.domains import DomainOperations
from herald_gateway.operations.events import EventOperations
from herald_gateway.operations.inbound import InboundOperations
from herald_gateway.operations.operator import OperatorOperations
from herald_gateway.operations.operators import OperatorAccountOperations
from herald_gateway.operations.payloads import PayloadOperations
from herald_gateway.operations.providers import ProviderOperations
from herald_gateway.operations.submit import SubmitOperations
from herald_gateway.operations.subscriptions import SubscriptionOperations
from herald_gateway.operations.target_secrets import TargetSecretOperations
from herald_gateway.operations.tenants import TenantOperations


class Operations(
    SubmitOperations,
    OperatorOperations,
    OperatorAccountOperations,
    TenantOperations,
    DomainOperations,
    ProviderOperations,
    EventOperations,
    SubscriptionOperations,
    TargetSecretOperations,
    InboundOperations,
    PayloadOperations,
):
    """All of them over one set of clients (see OperationsBase)."""
