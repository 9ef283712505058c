"""Table definitions, one module per entity; all share one MetaData."""

from herald_ledger.db.models.api_key import api_keys
from herald_ledger.db.models.attempt import attempts
from herald_ledger.db.models.audit_entry import audit_log
from herald_ledger.db.models.base import metadata
from herald_ledger.db.models.dead_letter import dead_letters
from herald_ledger.db.models.event import events
from herald_ledger.db.models.event_claim import event_claims
from herald_ledger.db.models.event_filter import event_filters
from herald_ledger.db.models.idempotency_key import idempotency_keys
from herald_ledger.db.models.inbound_config import inbound_configs
from herald_ledger.db.models.inbound_event import inbound_events
from herald_ledger.db.models.job import jobs
from herald_ledger.db.models.job_event import job_events
from herald_ledger.db.models.operational_event import operational_events
from herald_ledger.db.models.operator import operators
from herald_ledger.db.models.payload_expiry import payload_expiry
from herald_ledger.db.models.platform_email import platform_emails
from herald_ledger.db.models.provider_credential import provider_credentials
from herald_ledger.db.models.sending_domain import sending_domains
from herald_ledger.db.models.subscription import subscriptions
from herald_ledger.db.models.suppression import suppressions
from herald_ledger.db.models.target_signing_key import target_signing_keys
from herald_ledger.db.models.tenant import tenants
from herald_ledger.db.models.usage_counter import usage_counters
from herald_ledger.db.models.webhook_secret import webhook_secrets
from herald_ledger.db.models.webhook_target import webhook_targets

__all__ = [
    "api_keys",
    "attempts",
    "audit_log",
    "dead_letters",
    "event_claims",
    "event_filters",
    "events",
    "idempotency_keys",
    "inbound_configs",
    "inbound_events",
    "job_events",
    "jobs",
    "metadata",
    "operational_events",
    "operators",
    "payload_expiry",
    "platform_emails",
    "provider_credentials",
    "sending_domains",
    "subscriptions",
    "suppressions",
    "target_signing_keys",
    "tenants",
    "usage_counters",
    "webhook_secrets",
    "webhook_targets",
]
