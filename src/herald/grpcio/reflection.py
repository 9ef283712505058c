"""gRPC reflection that shows a service only to the callers allowed to see it.

The gateway's public port serves tenants and operators on one port; reflection there listed
AdminService (and its messages) to anyone, a map of the operator surface for whoever probes it.
Moving that surface to a port of its own would change every operator's address, the CLI's,
the console's and the Kubernetes Service's, for what is only a question of what reflection
tells whom: so reflection answers a caller without the operator token as if the service were
not there (not listed, its symbols not found, its definitions taken out of the file that holds
them), and an operator as before. The methods themselves still refuse a caller without the
token (herald_gateway.auth.OperatorAuthenticator); this only stops advertising them.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2
from grpc_reflection.v1alpha._async import ReflectionServicer

# Says from the caller's `authorization` metadata whether it may see the hidden service.
MaySee = Callable[[str | None], Awaitable[bool]]


class GuardedReflection(ReflectionServicer):  # type: ignore[misc]
    def __init__(self, service_names: list[str], hidden: str, may_see: MaySee) -> None:
        super().__init__(service_names)
        self._hidden = hidden
        self._package, _, self._short = hidden.rpartition(".")
        self._may_see = may_see

    async def ServerReflectionInfo(
        self, request_iterator: AsyncIterable[reflection_pb2.ServerReflectionRequest], context: Any
    ) -> AsyncIterator[reflection_pb2.ServerReflectionResponse]:
        authorization = dict(context.invocation_metadata() or ()).get("authorization")
        shown = await self._may_see(authorization if isinstance(authorization, str) else None)
        async for request in request_iterator:
            if not shown and self._names_hidden(request):
                yield reflection_pb2.ServerReflectionResponse(
                    original_request=request,
                    error_response=reflection_pb2.ErrorResponse(
                        error_code=grpc.StatusCode.NOT_FOUND.value[0], error_message="Symbol not found."
                    ),
                )
                continue
            async for response in super().ServerReflectionInfo(_one(request), context):
                yield response if shown else self._without_hidden(response)

    def _names_hidden(self, request: reflection_pb2.ServerReflectionRequest) -> bool:
        # The service, its methods, and the messages named after it (AdminServiceCreateTenantRequest).
        symbol: str = request.file_containing_symbol if request.HasField("file_containing_symbol") else ""
        return symbol.startswith(self._hidden)

    def _without_hidden(self, response: reflection_pb2.ServerReflectionResponse) -> Any:
        if response.HasField("list_services_response"):
            kept = [s for s in response.list_services_response.service if s.name != self._hidden]
            del response.list_services_response.service[:]
            response.list_services_response.service.extend(kept)
        elif response.HasField("file_descriptor_response"):
            files = [self._stripped(raw) for raw in response.file_descriptor_response.file_descriptor_proto]
            del response.file_descriptor_response.file_descriptor_proto[:]
            response.file_descriptor_response.file_descriptor_proto.extend(files)
        return response

    def _stripped(self, raw: bytes) -> bytes:
        """The file without the hidden service and the messages named after it (its requests and answers)."""
        file = descriptor_pb2.FileDescriptorProto.FromString(raw)
        if file.package != self._package or all(s.name != self._short for s in file.service):
            return raw
        services = [s for s in file.service if s.name != self._short]
        messages = [m for m in file.message_type if not m.name.startswith(self._short)]
        del file.service[:]
        file.service.extend(services)
        del file.message_type[:]
        file.message_type.extend(messages)
        return file.SerializeToString()


async def _one(request: Any) -> AsyncIterator[Any]:
    yield request
