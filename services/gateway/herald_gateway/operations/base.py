"""What every operations module works with: the services the gateway calls, and the guard on
where tenants aim outbound connections."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from herald.batching import Batcher
from herald.config import Settings
from herald.grpcio.ledger import Ledger
from herald.grpcio.options import CALL_DEADLINE_S
from herald.v1 import email_sender_pb2_grpc, ledger_jobs_pb2, router_pb2, router_pb2_grpc, webhook_sender_pb2_grpc
from herald_gateway.audit import Auditor
from herald_gateway.operations.crud import Crud, ItemT, Resource
from herald_gateway.target_check import TargetCheck

# Reads a dead-letter entry from the stream by sequence: the payload operators inspect.
StreamReader = Callable[[int], Awaitable[bytes | None]]


class OperationsBase:
    def __init__(
        self,
        ledger: Ledger,
        router: router_pb2_grpc.RouterServiceAsyncStub,
        email_sender: email_sender_pb2_grpc.EmailSenderServiceAsyncStub,
        dead_letter_reader: StreamReader | None = None,
    ) -> None:
        self.ledger = ledger
        self.router = router
        self.email_sender = email_sender
        # Concurrent requests reach the router as one SubmitJobs call: one hop for many jobs. One
        # call in flight: a second one's transaction would wait for the first's commit anyway (each
        # locks the usage counters of the tenants in it). Measured (docs/performance.md, "Measurements
        # behind the defaults"): two calls in flight instead of four halved the calls per job; one
        # instead of two halved them again (twenty-eight jobs a call), CPU per job 0.82x, the accept
        # rate the same.
        self.submitter: Batcher[router_pb2.Submission, ledger_jobs_pb2.DraftOutcome] = Batcher(
            self._submit_many,
            max_items=256,
            size_of=lambda s: s.ByteSize(),
            max_concurrent=1,
        )
        self.dead_letter_reader = dead_letter_reader
        # Refuses non-public webhook URLs at submit time (set by main; None: left to the sender).
        self.target_check: TargetCheck | None = None
        # The most a target may set as its `max_in_flight` (HERALD_WEBHOOK_TARGET_IN_FLIGHT_MAX; set by main).
        self.target_in_flight_max = Settings.model_fields["webhook_target_in_flight_max"].default
        # Tests a target now (set by main; None: the gateway cannot test targets).
        self.webhook_sender: webhook_sender_pb2_grpc.WebhookSenderServiceAsyncStub | None = None
        # Appends configuration changes to the audit log (herald_gateway.audit).
        self.auditor = Auditor(ledger)

    async def _submit_many(self, submissions: list[router_pb2.Submission]) -> list[ledger_jobs_pb2.DraftOutcome]:
        response = await self.router.SubmitJobs(
            router_pb2.SubmitJobsRequest(submissions=submissions), timeout=CALL_DEADLINE_S
        )
        return list(response.outcomes)

    def crud(self, resource: Resource[ItemT]) -> Crud[ItemT]:
        return Crud(self.ledger, resource)

    async def _url_problems(self, url: str) -> list[tuple[str, str]]:
        """The submit-time target verdict of a webhook URL (none without a target check)."""
        return await self.target_check.problems(url) if self.target_check is not None else []
