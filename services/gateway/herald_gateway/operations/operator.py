"""What only operators do across tenants: dead letters, the platform email log, the master
key, the email-sender's circuit breakers."""

from __future__ import annotations

from datetime import datetime

from herald.ids import parse_id
from herald.v1 import common_pb2, email_sender_pb2, ledger_jobs_pb2, ledger_providers_pb2, router_pb2
from herald_gateway.errors import Invalid, NotFound, ask
from herald_gateway.operations.jobs import JobOperations


class OperatorOperations(JobOperations):
    async def list_dead_letters(
        self, tenant_id: str, since: datetime | None, include_retried: bool, page_size: int, cursor: str
    ) -> tuple[list[common_pb2.DeadLetter], str]:
        if tenant_id and parse_id(tenant_id) is None:
            raise Invalid([("tenant_id", "must be a tenant id")])
        request = ledger_jobs_pb2.ListDeadLettersRequest(
            tenant_id=tenant_id, include_retried=include_retried, page_size=page_size, cursor=cursor
        )
        if since is not None:
            request.since.FromDatetime(since)
        page = await ask(self.ledger.jobs.ListDeadLetters(request), "dead letters")
        return list(page.entries), page.next_cursor

    async def list_platform_emails(
        self, tenant_id: str, kind: str, page_size: int, cursor: str
    ) -> tuple[list[common_pb2.PlatformEmail], str]:
        """The platform email log (operators), newest first."""
        if tenant_id and parse_id(tenant_id) is None:
            raise Invalid([("tenant_id", "must be a tenant id")])
        if cursor and parse_id(cursor) is None:
            raise Invalid([("cursor", "is not a cursor this API returned")])
        request = ledger_providers_pb2.ListPlatformEmailsRequest(
            tenant_id=tenant_id, kind=kind, page_size=page_size, cursor=cursor
        )
        page = await ask(self.ledger.providers.ListPlatformEmails(request), "platform emails")
        return list(page.entries), page.next_cursor

    async def get_dead_letter(self, job_id: str) -> tuple[common_pb2.DeadLetter, common_pb2.Job]:
        """The ledger's entry, with the work message read from the dead-letter stream."""
        if parse_id(job_id) is None:
            raise NotFound("dead letter not found")
        found = await ask(
            self.ledger.jobs.GetDeadLetter(ledger_jobs_pb2.GetDeadLetterRequest(job_id=job_id)), "dead letter"
        )
        entry: common_pb2.DeadLetter = found.entry
        if entry.stream_sequence and self.dead_letter_reader is not None:
            data = await self.dead_letter_reader(entry.stream_sequence)
            if data:
                stored = common_pb2.DeadLetter()
                stored.ParseFromString(data)
                if stored.job_id == entry.job_id:
                    entry.work_message = stored.work_message
                    entry.work_subject = stored.work_subject
        return entry, found.job

    async def retry_dead_letters(
        self, job_ids: list[str], all_waiting: bool, since: datetime | None
    ) -> list[ledger_jobs_pb2.RetryOutcome]:
        if all_waiting == bool(job_ids):
            raise Invalid([("job_ids/all", "give job ids, or all (optionally since a time)")])
        bad = [(f"job_ids[{i}]", "must be a job id") for i, j in enumerate(job_ids) if parse_id(j) is None]
        if bad:
            raise Invalid(bad)
        request = router_pb2.RouterServiceRetryJobsRequest(job_ids=job_ids, all_dead_letters=all_waiting)
        if since is not None:
            request.since.FromDatetime(since)
        return await self._retry(request)

    async def rotate_master_key(self) -> ledger_providers_pb2.ReencryptSecretsResponse:
        result: ledger_providers_pb2.ReencryptSecretsResponse = await ask(
            self.ledger.providers.ReencryptSecrets(ledger_providers_pb2.ReencryptSecretsRequest(batch_size=200)),
            "secrets",
        )
        return result

    async def provider_circuits(self) -> list[email_sender_pb2.ProviderCircuit]:
        """The breakers not closed in the email-sender process that answers (each replica has its own)."""
        status = await ask(
            self.email_sender.GetEmailWorkerStatus(email_sender_pb2.GetEmailWorkerStatusRequest(), timeout=10),
            "email-sender status",
        )
        return list(status.circuits)
