"""Named operators: each with a token of its own (shown once, stored as SHA-256 by the ledger),
revoked by name; the audit log names who did what."""

from __future__ import annotations

from herald.crypto import hash_api_key, new_operator_token
from herald.v1 import common_pb2, ledger_tenants_pb2
from herald_gateway.errors import ask
from herald_gateway.operations.base import OperationsBase


class OperatorAccountOperations(OperationsBase):
    async def create_operator(self, name: str) -> tuple[common_pb2.Operator, str]:
        token = new_operator_token()
        created = await ask(
            self.ledger.tenants.CreateOperator(
                ledger_tenants_pb2.CreateOperatorRequest(name=name, token_hash=hash_api_key(token))
            ),
            "operator",
        )
        operator: common_pb2.Operator = created.operator
        return operator, token

    async def list_operators(self) -> list[common_pb2.Operator]:
        found = await ask(self.ledger.tenants.ListOperators(ledger_tenants_pb2.ListOperatorsRequest()), "operators")
        return list(found.operators)

    async def revoke_operator(self, name: str) -> common_pb2.Operator:
        revoked = await ask(
            self.ledger.tenants.RevokeOperator(ledger_tenants_pb2.RevokeOperatorRequest(name=name)), "operator"
        )
        operator: common_pb2.Operator = revoked.operator
        return operator
