"""Table definitions, one module per entity; all share one MetaData."""

from herald_ledger.db.models.api_key import api_keys
from herald_ledger.db.models.attempt import attempts
from herald_ledger.db.models.base import metadata
from herald_ledger.db.models.idempotency_key import idempotency_keys
from herald_ledger.db.models.job import jobs
from herald_ledger.db.models.job_event import job_events
from herald_ledger.db.models.provider_credential import provider_credentials
from herald_ledger.db.models.suppression import suppressions
from herald_ledger.db.models.tenant import tenants
from herald_ledger.db.models.usage_counter import usage_counters
from herald_ledger.db.models.webhook_secret import webhook_secrets

__all__ = [
    "api_keys",
    "attempts",
    "idempotency_keys",
    "job_events",
    "jobs",
    "metadata",
    "provider_credentials",
    "suppressions",
    "tenants",
    "usage_counters",
    "webhook_secrets",
]
