import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from herald.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Rejection(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REJECTION_UNSPECIFIED: _ClassVar[Rejection]
    REJECTION_QUOTA_EXCEEDED: _ClassVar[Rejection]
    REJECTION_SENDER_DOMAIN_UNVERIFIED: _ClassVar[Rejection]
    REJECTION_IDEMPOTENCY_MISMATCH: _ClassVar[Rejection]
    REJECTION_IDEMPOTENCY_IN_FLIGHT: _ClassVar[Rejection]

class IdempotencyState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    IDEMPOTENCY_STATE_UNSPECIFIED: _ClassVar[IdempotencyState]
    IDEMPOTENCY_STATE_NEW: _ClassVar[IdempotencyState]
    IDEMPOTENCY_STATE_IN_FLIGHT: _ClassVar[IdempotencyState]
    IDEMPOTENCY_STATE_COMPLETED: _ClassVar[IdempotencyState]
    IDEMPOTENCY_STATE_MISMATCH: _ClassVar[IdempotencyState]
REJECTION_UNSPECIFIED: Rejection
REJECTION_QUOTA_EXCEEDED: Rejection
REJECTION_SENDER_DOMAIN_UNVERIFIED: Rejection
REJECTION_IDEMPOTENCY_MISMATCH: Rejection
REJECTION_IDEMPOTENCY_IN_FLIGHT: Rejection
IDEMPOTENCY_STATE_UNSPECIFIED: IdempotencyState
IDEMPOTENCY_STATE_NEW: IdempotencyState
IDEMPOTENCY_STATE_IN_FLIGHT: IdempotencyState
IDEMPOTENCY_STATE_COMPLETED: IdempotencyState
IDEMPOTENCY_STATE_MISMATCH: IdempotencyState

class JobDraft(_message.Message):
    __slots__ = ("tenant_id", "channel", "priority", "idempotency_key", "webhook", "email", "ordering_key", "request_hash")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    ORDERING_KEY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_HASH_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    channel: _common_pb2.Channel
    priority: _common_pb2.Priority
    idempotency_key: str
    webhook: _common_pb2.WebhookRequest
    email: _common_pb2.EmailRequest
    ordering_key: str
    request_hash: bytes
    def __init__(self, tenant_id: _Optional[str] = ..., channel: _Optional[_Union[_common_pb2.Channel, str]] = ..., priority: _Optional[_Union[_common_pb2.Priority, str]] = ..., idempotency_key: _Optional[str] = ..., webhook: _Optional[_Union[_common_pb2.WebhookRequest, _Mapping]] = ..., email: _Optional[_Union[_common_pb2.EmailRequest, _Mapping]] = ..., ordering_key: _Optional[str] = ..., request_hash: _Optional[bytes] = ...) -> None: ...

class CreateJobsRequest(_message.Message):
    __slots__ = ("drafts",)
    DRAFTS_FIELD_NUMBER: _ClassVar[int]
    drafts: _containers.RepeatedCompositeFieldContainer[JobDraft]
    def __init__(self, drafts: _Optional[_Iterable[_Union[JobDraft, _Mapping]]] = ...) -> None: ...

class DraftOutcome(_message.Message):
    __slots__ = ("job", "rejection", "detail", "replayed")
    JOB_FIELD_NUMBER: _ClassVar[int]
    REJECTION_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    job: _common_pb2.Job
    rejection: Rejection
    detail: str
    replayed: bool
    def __init__(self, job: _Optional[_Union[_common_pb2.Job, _Mapping]] = ..., rejection: _Optional[_Union[Rejection, str]] = ..., detail: _Optional[str] = ..., replayed: _Optional[bool] = ...) -> None: ...

class CreateJobsResponse(_message.Message):
    __slots__ = ("outcomes",)
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    outcomes: _containers.RepeatedCompositeFieldContainer[DraftOutcome]
    def __init__(self, outcomes: _Optional[_Iterable[_Union[DraftOutcome, _Mapping]]] = ...) -> None: ...

class GetJobRequest(_message.Message):
    __slots__ = ("tenant_id", "job_id", "include_request")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_REQUEST_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    job_id: str
    include_request: bool
    def __init__(self, tenant_id: _Optional[str] = ..., job_id: _Optional[str] = ..., include_request: _Optional[bool] = ...) -> None: ...

class GetJobResponse(_message.Message):
    __slots__ = ("job",)
    JOB_FIELD_NUMBER: _ClassVar[int]
    job: _common_pb2.Job
    def __init__(self, job: _Optional[_Union[_common_pb2.Job, _Mapping]] = ...) -> None: ...

class ListJobsRequest(_message.Message):
    __slots__ = ("tenant_id", "page_size", "cursor", "status", "channel", "created_after", "created_before")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    CREATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    page_size: int
    cursor: str
    status: _common_pb2.JobStatus
    channel: _common_pb2.Channel
    created_after: _timestamp_pb2.Timestamp
    created_before: _timestamp_pb2.Timestamp
    def __init__(self, tenant_id: _Optional[str] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ..., status: _Optional[_Union[_common_pb2.JobStatus, str]] = ..., channel: _Optional[_Union[_common_pb2.Channel, str]] = ..., created_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListJobsResponse(_message.Message):
    __slots__ = ("jobs", "next_cursor")
    JOBS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[_common_pb2.Job]
    next_cursor: str
    def __init__(self, jobs: _Optional[_Iterable[_Union[_common_pb2.Job, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class MarkQueuedRequest(_message.Message):
    __slots__ = ("job_ids",)
    JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    job_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, job_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class MarkQueuedResponse(_message.Message):
    __slots__ = ("updated",)
    UPDATED_FIELD_NUMBER: _ClassVar[int]
    updated: int
    def __init__(self, updated: _Optional[int] = ...) -> None: ...

class StartDeliveriesRequest(_message.Message):
    __slots__ = ("job_ids",)
    JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    job_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, job_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class DeliveryStart(_message.Message):
    __slots__ = ("job_id", "proceed", "status", "attempt_count", "wait")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    PROCEED_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_COUNT_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    proceed: bool
    status: _common_pb2.JobStatus
    attempt_count: int
    wait: bool
    def __init__(self, job_id: _Optional[str] = ..., proceed: _Optional[bool] = ..., status: _Optional[_Union[_common_pb2.JobStatus, str]] = ..., attempt_count: _Optional[int] = ..., wait: _Optional[bool] = ...) -> None: ...

class StartDeliveriesResponse(_message.Message):
    __slots__ = ("starts",)
    STARTS_FIELD_NUMBER: _ClassVar[int]
    starts: _containers.RepeatedCompositeFieldContainer[DeliveryStart]
    def __init__(self, starts: _Optional[_Iterable[_Union[DeliveryStart, _Mapping]]] = ...) -> None: ...

class AttemptResult(_message.Message):
    __slots__ = ("attempt", "next_status", "error", "dead_lettered", "dead_letter_sequence")
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    NEXT_STATUS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTERED_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTER_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    attempt: _common_pb2.Attempt
    next_status: _common_pb2.JobStatus
    error: str
    dead_lettered: bool
    dead_letter_sequence: int
    def __init__(self, attempt: _Optional[_Union[_common_pb2.Attempt, _Mapping]] = ..., next_status: _Optional[_Union[_common_pb2.JobStatus, str]] = ..., error: _Optional[str] = ..., dead_lettered: _Optional[bool] = ..., dead_letter_sequence: _Optional[int] = ...) -> None: ...

class RecordAttemptsRequest(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[AttemptResult]
    def __init__(self, results: _Optional[_Iterable[_Union[AttemptResult, _Mapping]]] = ...) -> None: ...

class RecordAttemptsResponse(_message.Message):
    __slots__ = ("recorded",)
    RECORDED_FIELD_NUMBER: _ClassVar[int]
    recorded: int
    def __init__(self, recorded: _Optional[int] = ...) -> None: ...

class AdvanceDeliveriesRequest(_message.Message):
    __slots__ = ("results", "start_job_ids")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    START_JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[AttemptResult]
    start_job_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, results: _Optional[_Iterable[_Union[AttemptResult, _Mapping]]] = ..., start_job_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class AdvanceDeliveriesResponse(_message.Message):
    __slots__ = ("recorded", "starts")
    RECORDED_FIELD_NUMBER: _ClassVar[int]
    STARTS_FIELD_NUMBER: _ClassVar[int]
    recorded: int
    starts: _containers.RepeatedCompositeFieldContainer[DeliveryStart]
    def __init__(self, recorded: _Optional[int] = ..., starts: _Optional[_Iterable[_Union[DeliveryStart, _Mapping]]] = ...) -> None: ...

class ListAttemptsRequest(_message.Message):
    __slots__ = ("tenant_id", "job_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    job_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., job_id: _Optional[str] = ...) -> None: ...

class ListAttemptsResponse(_message.Message):
    __slots__ = ("attempts",)
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    attempts: _containers.RepeatedCompositeFieldContainer[_common_pb2.Attempt]
    def __init__(self, attempts: _Optional[_Iterable[_Union[_common_pb2.Attempt, _Mapping]]] = ...) -> None: ...

class ClaimUnpublishedRequest(_message.Message):
    __slots__ = ("older_than_ms", "limit", "lease_ms")
    OLDER_THAN_MS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    LEASE_MS_FIELD_NUMBER: _ClassVar[int]
    older_than_ms: int
    limit: int
    lease_ms: int
    def __init__(self, older_than_ms: _Optional[int] = ..., limit: _Optional[int] = ..., lease_ms: _Optional[int] = ...) -> None: ...

class ClaimUnpublishedResponse(_message.Message):
    __slots__ = ("jobs",)
    JOBS_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[_common_pb2.Job]
    def __init__(self, jobs: _Optional[_Iterable[_Union[_common_pb2.Job, _Mapping]]] = ...) -> None: ...

class FailUnpublishedRequest(_message.Message):
    __slots__ = ("older_than_ms", "reason")
    OLDER_THAN_MS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    older_than_ms: int
    reason: str
    def __init__(self, older_than_ms: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class FailUnpublishedResponse(_message.Message):
    __slots__ = ("job_ids",)
    JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    job_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, job_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class CreateTenantRequest(_message.Message):
    __slots__ = ("name", "plan", "contact_email")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    CONTACT_EMAIL_FIELD_NUMBER: _ClassVar[int]
    name: str
    plan: _common_pb2.Plan
    contact_email: str
    def __init__(self, name: _Optional[str] = ..., plan: _Optional[_Union[_common_pb2.Plan, str]] = ..., contact_email: _Optional[str] = ...) -> None: ...

class CreateTenantResponse(_message.Message):
    __slots__ = ("tenant",)
    TENANT_FIELD_NUMBER: _ClassVar[int]
    tenant: _common_pb2.Tenant
    def __init__(self, tenant: _Optional[_Union[_common_pb2.Tenant, _Mapping]] = ...) -> None: ...

class GetTenantRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class GetTenantResponse(_message.Message):
    __slots__ = ("tenant",)
    TENANT_FIELD_NUMBER: _ClassVar[int]
    tenant: _common_pb2.Tenant
    def __init__(self, tenant: _Optional[_Union[_common_pb2.Tenant, _Mapping]] = ...) -> None: ...

class CreateApiKeyRequest(_message.Message):
    __slots__ = ("tenant_id", "name", "key_hash", "public_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    KEY_HASH_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    name: str
    key_hash: bytes
    public_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., name: _Optional[str] = ..., key_hash: _Optional[bytes] = ..., public_id: _Optional[str] = ...) -> None: ...

class CreateApiKeyResponse(_message.Message):
    __slots__ = ("key_id", "created_at")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, key_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class AuthenticateApiKeyRequest(_message.Message):
    __slots__ = ("key_hash",)
    KEY_HASH_FIELD_NUMBER: _ClassVar[int]
    key_hash: bytes
    def __init__(self, key_hash: _Optional[bytes] = ...) -> None: ...

class AuthenticateApiKeyResponse(_message.Message):
    __slots__ = ("found", "tenant", "key_id")
    FOUND_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    found: bool
    tenant: _common_pb2.Tenant
    key_id: str
    def __init__(self, found: _Optional[bool] = ..., tenant: _Optional[_Union[_common_pb2.Tenant, _Mapping]] = ..., key_id: _Optional[str] = ...) -> None: ...

class ListTenantsRequest(_message.Message):
    __slots__ = ("page_size", "cursor")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    cursor: str
    def __init__(self, page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListTenantsResponse(_message.Message):
    __slots__ = ("tenants", "next_cursor")
    TENANTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    tenants: _containers.RepeatedCompositeFieldContainer[_common_pb2.Tenant]
    next_cursor: str
    def __init__(self, tenants: _Optional[_Iterable[_Union[_common_pb2.Tenant, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class UpdateTenantRequest(_message.Message):
    __slots__ = ("tenant_id", "plan", "disabled", "contact_email")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    DISABLED_FIELD_NUMBER: _ClassVar[int]
    CONTACT_EMAIL_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    plan: _common_pb2.Plan
    disabled: bool
    contact_email: str
    def __init__(self, tenant_id: _Optional[str] = ..., plan: _Optional[_Union[_common_pb2.Plan, str]] = ..., disabled: _Optional[bool] = ..., contact_email: _Optional[str] = ...) -> None: ...

class UpdateTenantResponse(_message.Message):
    __slots__ = ("tenant",)
    TENANT_FIELD_NUMBER: _ClassVar[int]
    tenant: _common_pb2.Tenant
    def __init__(self, tenant: _Optional[_Union[_common_pb2.Tenant, _Mapping]] = ...) -> None: ...

class ListApiKeysRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class ListApiKeysResponse(_message.Message):
    __slots__ = ("keys",)
    KEYS_FIELD_NUMBER: _ClassVar[int]
    keys: _containers.RepeatedCompositeFieldContainer[_common_pb2.ApiKey]
    def __init__(self, keys: _Optional[_Iterable[_Union[_common_pb2.ApiKey, _Mapping]]] = ...) -> None: ...

class RevokeApiKeyRequest(_message.Message):
    __slots__ = ("tenant_id", "key_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    key_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., key_id: _Optional[str] = ...) -> None: ...

class RevokeApiKeyResponse(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: _common_pb2.ApiKey
    def __init__(self, key: _Optional[_Union[_common_pb2.ApiKey, _Mapping]] = ...) -> None: ...

class ApiKeyUse(_message.Message):
    __slots__ = ("key_id", "used_at")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    USED_AT_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    used_at: _timestamp_pb2.Timestamp
    def __init__(self, key_id: _Optional[str] = ..., used_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class TouchApiKeysRequest(_message.Message):
    __slots__ = ("uses",)
    USES_FIELD_NUMBER: _ClassVar[int]
    uses: _containers.RepeatedCompositeFieldContainer[ApiKeyUse]
    def __init__(self, uses: _Optional[_Iterable[_Union[ApiKeyUse, _Mapping]]] = ...) -> None: ...

class TouchApiKeysResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CreateProviderRequest(_message.Message):
    __slots__ = ("tenant_id", "credential", "priority", "base_url", "options")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    credential: _common_pb2.ProviderCredential
    priority: int
    base_url: str
    options: _containers.ScalarMap[str, str]
    def __init__(self, tenant_id: _Optional[str] = ..., credential: _Optional[_Union[_common_pb2.ProviderCredential, _Mapping]] = ..., priority: _Optional[int] = ..., base_url: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ...) -> None: ...

class CreateProviderResponse(_message.Message):
    __slots__ = ("provider",)
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    provider: _common_pb2.ProviderConfig
    def __init__(self, provider: _Optional[_Union[_common_pb2.ProviderConfig, _Mapping]] = ...) -> None: ...

class ListProvidersRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class ListProvidersResponse(_message.Message):
    __slots__ = ("providers",)
    PROVIDERS_FIELD_NUMBER: _ClassVar[int]
    providers: _containers.RepeatedCompositeFieldContainer[_common_pb2.ProviderConfig]
    def __init__(self, providers: _Optional[_Iterable[_Union[_common_pb2.ProviderConfig, _Mapping]]] = ...) -> None: ...

class UpdateProviderRequest(_message.Message):
    __slots__ = ("tenant_id", "provider_id", "priority", "base_url", "replace_options", "options", "credential", "account_token")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    REPLACE_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    provider_id: str
    priority: int
    base_url: str
    replace_options: bool
    options: _containers.ScalarMap[str, str]
    credential: _common_pb2.ProviderCredential
    account_token: str
    def __init__(self, tenant_id: _Optional[str] = ..., provider_id: _Optional[str] = ..., priority: _Optional[int] = ..., base_url: _Optional[str] = ..., replace_options: _Optional[bool] = ..., options: _Optional[_Mapping[str, str]] = ..., credential: _Optional[_Union[_common_pb2.ProviderCredential, _Mapping]] = ..., account_token: _Optional[str] = ...) -> None: ...

class UpdateProviderResponse(_message.Message):
    __slots__ = ("provider",)
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    provider: _common_pb2.ProviderConfig
    def __init__(self, provider: _Optional[_Union[_common_pb2.ProviderConfig, _Mapping]] = ...) -> None: ...

class DeleteProviderRequest(_message.Message):
    __slots__ = ("tenant_id", "provider_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    provider_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., provider_id: _Optional[str] = ...) -> None: ...

class DeleteProviderResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ProviderSecret(_message.Message):
    __slots__ = ("config", "sealed_credential")
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    SEALED_CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    config: _common_pb2.ProviderConfig
    sealed_credential: bytes
    def __init__(self, config: _Optional[_Union[_common_pb2.ProviderConfig, _Mapping]] = ..., sealed_credential: _Optional[bytes] = ...) -> None: ...

class GetProviderSecretsRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class GetProviderSecretsResponse(_message.Message):
    __slots__ = ("providers",)
    PROVIDERS_FIELD_NUMBER: _ClassVar[int]
    providers: _containers.RepeatedCompositeFieldContainer[ProviderSecret]
    def __init__(self, providers: _Optional[_Iterable[_Union[ProviderSecret, _Mapping]]] = ...) -> None: ...

class GenerateWebhookSecretRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class GenerateWebhookSecretResponse(_message.Message):
    __slots__ = ("secret", "status")
    SECRET_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    secret: str
    status: _common_pb2.WebhookSecretStatus
    def __init__(self, secret: _Optional[str] = ..., status: _Optional[_Union[_common_pb2.WebhookSecretStatus, _Mapping]] = ...) -> None: ...

class RotateWebhookSecretRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class RotateWebhookSecretResponse(_message.Message):
    __slots__ = ("secret", "status")
    SECRET_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    secret: str
    status: _common_pb2.WebhookSecretStatus
    def __init__(self, secret: _Optional[str] = ..., status: _Optional[_Union[_common_pb2.WebhookSecretStatus, _Mapping]] = ...) -> None: ...

class GetWebhookSecretStatusRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class GetWebhookSecretStatusResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.WebhookSecretStatus
    def __init__(self, status: _Optional[_Union[_common_pb2.WebhookSecretStatus, _Mapping]] = ...) -> None: ...

class DeleteWebhookSecretRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class DeleteWebhookSecretResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class GetSigningSecretsRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class GetSigningSecretsResponse(_message.Message):
    __slots__ = ("sealed_current", "sealed_previous", "previous_expires_at")
    SEALED_CURRENT_FIELD_NUMBER: _ClassVar[int]
    SEALED_PREVIOUS_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    sealed_current: bytes
    sealed_previous: bytes
    previous_expires_at: _timestamp_pb2.Timestamp
    def __init__(self, sealed_current: _Optional[bytes] = ..., sealed_previous: _Optional[bytes] = ..., previous_expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ReencryptSecretsRequest(_message.Message):
    __slots__ = ("batch_size",)
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    batch_size: int
    def __init__(self, batch_size: _Optional[int] = ...) -> None: ...

class ReencryptSecretsResponse(_message.Message):
    __slots__ = ("reencrypted", "already_current", "active_key_id", "unreadable_ids")
    REENCRYPTED_FIELD_NUMBER: _ClassVar[int]
    ALREADY_CURRENT_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_KEY_ID_FIELD_NUMBER: _ClassVar[int]
    UNREADABLE_IDS_FIELD_NUMBER: _ClassVar[int]
    reencrypted: int
    already_current: int
    active_key_id: str
    unreadable_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, reencrypted: _Optional[int] = ..., already_current: _Optional[int] = ..., active_key_id: _Optional[str] = ..., unreadable_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class SetTenantLimitsRequest(_message.Message):
    __slots__ = ("tenant_id", "rate_per_min", "webhooks_per_month", "emails_per_month")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    RATE_PER_MIN_FIELD_NUMBER: _ClassVar[int]
    WEBHOOKS_PER_MONTH_FIELD_NUMBER: _ClassVar[int]
    EMAILS_PER_MONTH_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    rate_per_min: int
    webhooks_per_month: int
    emails_per_month: int
    def __init__(self, tenant_id: _Optional[str] = ..., rate_per_min: _Optional[int] = ..., webhooks_per_month: _Optional[int] = ..., emails_per_month: _Optional[int] = ...) -> None: ...

class SetTenantLimitsResponse(_message.Message):
    __slots__ = ("tenant",)
    TENANT_FIELD_NUMBER: _ClassVar[int]
    tenant: _common_pb2.Tenant
    def __init__(self, tenant: _Optional[_Union[_common_pb2.Tenant, _Mapping]] = ...) -> None: ...

class GetUsageRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class GetUsageResponse(_message.Message):
    __slots__ = ("usage",)
    USAGE_FIELD_NUMBER: _ClassVar[int]
    usage: _common_pb2.Usage
    def __init__(self, usage: _Optional[_Union[_common_pb2.Usage, _Mapping]] = ...) -> None: ...

class ListSuppressionsRequest(_message.Message):
    __slots__ = ("tenant_id", "page_size", "cursor")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    page_size: int
    cursor: str
    def __init__(self, tenant_id: _Optional[str] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListSuppressionsResponse(_message.Message):
    __slots__ = ("entries", "next_cursor")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[_common_pb2.SuppressionEntry]
    next_cursor: str
    def __init__(self, entries: _Optional[_Iterable[_Union[_common_pb2.SuppressionEntry, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class AddSuppressionsRequest(_message.Message):
    __slots__ = ("tenant_id", "entries")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    entries: _containers.RepeatedCompositeFieldContainer[_common_pb2.SuppressionEntry]
    def __init__(self, tenant_id: _Optional[str] = ..., entries: _Optional[_Iterable[_Union[_common_pb2.SuppressionEntry, _Mapping]]] = ...) -> None: ...

class AddSuppressionsResponse(_message.Message):
    __slots__ = ("added",)
    ADDED_FIELD_NUMBER: _ClassVar[int]
    added: int
    def __init__(self, added: _Optional[int] = ...) -> None: ...

class RemoveSuppressionRequest(_message.Message):
    __slots__ = ("tenant_id", "address")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    address: str
    def __init__(self, tenant_id: _Optional[str] = ..., address: _Optional[str] = ...) -> None: ...

class RemoveSuppressionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class BeginIdempotentRequest(_message.Message):
    __slots__ = ("tenant_id", "key", "request_hash")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_HASH_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    key: str
    request_hash: bytes
    def __init__(self, tenant_id: _Optional[str] = ..., key: _Optional[str] = ..., request_hash: _Optional[bytes] = ...) -> None: ...

class BeginIdempotentResponse(_message.Message):
    __slots__ = ("state", "status_code", "body")
    STATE_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    state: IdempotencyState
    status_code: int
    body: bytes
    def __init__(self, state: _Optional[_Union[IdempotencyState, str]] = ..., status_code: _Optional[int] = ..., body: _Optional[bytes] = ...) -> None: ...

class CompleteIdempotentRequest(_message.Message):
    __slots__ = ("tenant_id", "key", "status_code", "body")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    key: str
    status_code: int
    body: bytes
    def __init__(self, tenant_id: _Optional[str] = ..., key: _Optional[str] = ..., status_code: _Optional[int] = ..., body: _Optional[bytes] = ...) -> None: ...

class CompleteIdempotentResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class AbandonIdempotentRequest(_message.Message):
    __slots__ = ("tenant_id", "key")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    key: str
    def __init__(self, tenant_id: _Optional[str] = ..., key: _Optional[str] = ...) -> None: ...

class AbandonIdempotentResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class WalkRecord(_message.Message):
    __slots__ = ("job_id", "calls", "next_status", "error", "provider_id", "provider_message_id", "dead_lettered", "dead_letter_sequence")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    NEXT_STATUS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTERED_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTER_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    calls: _containers.RepeatedCompositeFieldContainer[_common_pb2.Attempt]
    next_status: _common_pb2.JobStatus
    error: str
    provider_id: str
    provider_message_id: str
    dead_lettered: bool
    dead_letter_sequence: int
    def __init__(self, job_id: _Optional[str] = ..., calls: _Optional[_Iterable[_Union[_common_pb2.Attempt, _Mapping]]] = ..., next_status: _Optional[_Union[_common_pb2.JobStatus, str]] = ..., error: _Optional[str] = ..., provider_id: _Optional[str] = ..., provider_message_id: _Optional[str] = ..., dead_lettered: _Optional[bool] = ..., dead_letter_sequence: _Optional[int] = ...) -> None: ...

class RecordWalksRequest(_message.Message):
    __slots__ = ("walks",)
    WALKS_FIELD_NUMBER: _ClassVar[int]
    walks: _containers.RepeatedCompositeFieldContainer[WalkRecord]
    def __init__(self, walks: _Optional[_Iterable[_Union[WalkRecord, _Mapping]]] = ...) -> None: ...

class RecordWalksResponse(_message.Message):
    __slots__ = ("recorded",)
    RECORDED_FIELD_NUMBER: _ClassVar[int]
    recorded: int
    def __init__(self, recorded: _Optional[int] = ...) -> None: ...

class RetryJobsRequest(_message.Message):
    __slots__ = ("tenant_id", "job_ids", "all_dead_letters", "since", "limit")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    ALL_DEAD_LETTERS_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    job_ids: _containers.RepeatedScalarFieldContainer[str]
    all_dead_letters: bool
    since: _timestamp_pb2.Timestamp
    limit: int
    def __init__(self, tenant_id: _Optional[str] = ..., job_ids: _Optional[_Iterable[str]] = ..., all_dead_letters: _Optional[bool] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., limit: _Optional[int] = ...) -> None: ...

class RetryOutcome(_message.Message):
    __slots__ = ("job_id", "retried", "status", "detail")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    RETRIED_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    retried: bool
    status: _common_pb2.JobStatus
    detail: str
    def __init__(self, job_id: _Optional[str] = ..., retried: _Optional[bool] = ..., status: _Optional[_Union[_common_pb2.JobStatus, str]] = ..., detail: _Optional[str] = ...) -> None: ...

class RetryJobsResponse(_message.Message):
    __slots__ = ("outcomes", "jobs", "released_dead_letter_sequences")
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    RELEASED_DEAD_LETTER_SEQUENCES_FIELD_NUMBER: _ClassVar[int]
    outcomes: _containers.RepeatedCompositeFieldContainer[RetryOutcome]
    jobs: _containers.RepeatedCompositeFieldContainer[_common_pb2.Job]
    released_dead_letter_sequences: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, outcomes: _Optional[_Iterable[_Union[RetryOutcome, _Mapping]]] = ..., jobs: _Optional[_Iterable[_Union[_common_pb2.Job, _Mapping]]] = ..., released_dead_letter_sequences: _Optional[_Iterable[int]] = ...) -> None: ...

class ListDeadLettersRequest(_message.Message):
    __slots__ = ("tenant_id", "since", "include_retried", "page_size", "cursor")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_RETRIED_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    since: _timestamp_pb2.Timestamp
    include_retried: bool
    page_size: int
    cursor: str
    def __init__(self, tenant_id: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., include_retried: _Optional[bool] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListDeadLettersResponse(_message.Message):
    __slots__ = ("entries", "next_cursor")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[_common_pb2.DeadLetter]
    next_cursor: str
    def __init__(self, entries: _Optional[_Iterable[_Union[_common_pb2.DeadLetter, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class GetDeadLetterRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class GetDeadLetterResponse(_message.Message):
    __slots__ = ("entry", "job")
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    entry: _common_pb2.DeadLetter
    job: _common_pb2.Job
    def __init__(self, entry: _Optional[_Union[_common_pb2.DeadLetter, _Mapping]] = ..., job: _Optional[_Union[_common_pb2.Job, _Mapping]] = ...) -> None: ...

class CreateDomainRequest(_message.Message):
    __slots__ = ("domain",)
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    domain: _common_pb2.SendingDomain
    def __init__(self, domain: _Optional[_Union[_common_pb2.SendingDomain, _Mapping]] = ...) -> None: ...

class CreateDomainResponse(_message.Message):
    __slots__ = ("domain",)
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    domain: _common_pb2.SendingDomain
    def __init__(self, domain: _Optional[_Union[_common_pb2.SendingDomain, _Mapping]] = ...) -> None: ...

class UpdateDomainRequest(_message.Message):
    __slots__ = ("tenant_id", "domain_id", "verified", "records", "provider_status")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_ID_FIELD_NUMBER: _ClassVar[int]
    VERIFIED_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_STATUS_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    domain_id: str
    verified: bool
    records: _containers.RepeatedCompositeFieldContainer[_common_pb2.DnsRecord]
    provider_status: str
    def __init__(self, tenant_id: _Optional[str] = ..., domain_id: _Optional[str] = ..., verified: _Optional[bool] = ..., records: _Optional[_Iterable[_Union[_common_pb2.DnsRecord, _Mapping]]] = ..., provider_status: _Optional[str] = ...) -> None: ...

class UpdateDomainResponse(_message.Message):
    __slots__ = ("domain",)
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    domain: _common_pb2.SendingDomain
    def __init__(self, domain: _Optional[_Union[_common_pb2.SendingDomain, _Mapping]] = ...) -> None: ...

class GetDomainRequest(_message.Message):
    __slots__ = ("tenant_id", "domain_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    domain_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., domain_id: _Optional[str] = ...) -> None: ...

class GetDomainResponse(_message.Message):
    __slots__ = ("domain",)
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    domain: _common_pb2.SendingDomain
    def __init__(self, domain: _Optional[_Union[_common_pb2.SendingDomain, _Mapping]] = ...) -> None: ...

class ListDomainsRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class ListDomainsResponse(_message.Message):
    __slots__ = ("domains",)
    DOMAINS_FIELD_NUMBER: _ClassVar[int]
    domains: _containers.RepeatedCompositeFieldContainer[_common_pb2.SendingDomain]
    def __init__(self, domains: _Optional[_Iterable[_Union[_common_pb2.SendingDomain, _Mapping]]] = ...) -> None: ...

class DeleteDomainRequest(_message.Message):
    __slots__ = ("tenant_id", "domain_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    domain_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., domain_id: _Optional[str] = ...) -> None: ...

class DeleteDomainResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ClaimIdempotencyKeysRequest(_message.Message):
    __slots__ = ("claims",)
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    claims: _containers.RepeatedCompositeFieldContainer[BeginIdempotentRequest]
    def __init__(self, claims: _Optional[_Iterable[_Union[BeginIdempotentRequest, _Mapping]]] = ...) -> None: ...

class ClaimIdempotencyKeysResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[BeginIdempotentResponse]
    def __init__(self, results: _Optional[_Iterable[_Union[BeginIdempotentResponse, _Mapping]]] = ...) -> None: ...

class CompleteIdempotencyKeysRequest(_message.Message):
    __slots__ = ("completions",)
    COMPLETIONS_FIELD_NUMBER: _ClassVar[int]
    completions: _containers.RepeatedCompositeFieldContainer[CompleteIdempotentRequest]
    def __init__(self, completions: _Optional[_Iterable[_Union[CompleteIdempotentRequest, _Mapping]]] = ...) -> None: ...

class CompleteIdempotencyKeysResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CreateWebhookTargetRequest(_message.Message):
    __slots__ = ("target",)
    TARGET_FIELD_NUMBER: _ClassVar[int]
    target: _common_pb2.WebhookTarget
    def __init__(self, target: _Optional[_Union[_common_pb2.WebhookTarget, _Mapping]] = ...) -> None: ...

class CreateWebhookTargetResponse(_message.Message):
    __slots__ = ("target",)
    TARGET_FIELD_NUMBER: _ClassVar[int]
    target: _common_pb2.WebhookTarget
    def __init__(self, target: _Optional[_Union[_common_pb2.WebhookTarget, _Mapping]] = ...) -> None: ...

class GetWebhookTargetRequest(_message.Message):
    __slots__ = ("tenant_id", "target_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    target_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., target_id: _Optional[str] = ...) -> None: ...

class GetWebhookTargetResponse(_message.Message):
    __slots__ = ("target",)
    TARGET_FIELD_NUMBER: _ClassVar[int]
    target: _common_pb2.WebhookTarget
    def __init__(self, target: _Optional[_Union[_common_pb2.WebhookTarget, _Mapping]] = ...) -> None: ...

class ListWebhookTargetsRequest(_message.Message):
    __slots__ = ("tenant_id", "page_size", "cursor")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    page_size: int
    cursor: str
    def __init__(self, tenant_id: _Optional[str] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListWebhookTargetsResponse(_message.Message):
    __slots__ = ("targets", "next_cursor")
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    targets: _containers.RepeatedCompositeFieldContainer[_common_pb2.WebhookTarget]
    next_cursor: str
    def __init__(self, targets: _Optional[_Iterable[_Union[_common_pb2.WebhookTarget, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class UpdateWebhookTargetRequest(_message.Message):
    __slots__ = ("tenant_id", "target_id", "url", "description", "replace_headers", "headers", "rate_limit_per_min", "enabled", "disabled_reason")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    REPLACE_HEADERS_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMIT_PER_MIN_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    DISABLED_REASON_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    target_id: str
    url: str
    description: str
    replace_headers: bool
    headers: _containers.ScalarMap[str, str]
    rate_limit_per_min: int
    enabled: bool
    disabled_reason: str
    def __init__(self, tenant_id: _Optional[str] = ..., target_id: _Optional[str] = ..., url: _Optional[str] = ..., description: _Optional[str] = ..., replace_headers: _Optional[bool] = ..., headers: _Optional[_Mapping[str, str]] = ..., rate_limit_per_min: _Optional[int] = ..., enabled: _Optional[bool] = ..., disabled_reason: _Optional[str] = ...) -> None: ...

class UpdateWebhookTargetResponse(_message.Message):
    __slots__ = ("target",)
    TARGET_FIELD_NUMBER: _ClassVar[int]
    target: _common_pb2.WebhookTarget
    def __init__(self, target: _Optional[_Union[_common_pb2.WebhookTarget, _Mapping]] = ...) -> None: ...

class DeleteWebhookTargetRequest(_message.Message):
    __slots__ = ("tenant_id", "target_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    target_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., target_id: _Optional[str] = ...) -> None: ...

class DeleteWebhookTargetResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CreateEventFilterRequest(_message.Message):
    __slots__ = ("filter",)
    FILTER_FIELD_NUMBER: _ClassVar[int]
    filter: _common_pb2.EventFilter
    def __init__(self, filter: _Optional[_Union[_common_pb2.EventFilter, _Mapping]] = ...) -> None: ...

class CreateEventFilterResponse(_message.Message):
    __slots__ = ("filter",)
    FILTER_FIELD_NUMBER: _ClassVar[int]
    filter: _common_pb2.EventFilter
    def __init__(self, filter: _Optional[_Union[_common_pb2.EventFilter, _Mapping]] = ...) -> None: ...

class GetEventFilterRequest(_message.Message):
    __slots__ = ("tenant_id", "filter_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    FILTER_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    filter_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., filter_id: _Optional[str] = ...) -> None: ...

class GetEventFilterResponse(_message.Message):
    __slots__ = ("filter",)
    FILTER_FIELD_NUMBER: _ClassVar[int]
    filter: _common_pb2.EventFilter
    def __init__(self, filter: _Optional[_Union[_common_pb2.EventFilter, _Mapping]] = ...) -> None: ...

class ListEventFiltersRequest(_message.Message):
    __slots__ = ("tenant_id", "page_size", "cursor")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    page_size: int
    cursor: str
    def __init__(self, tenant_id: _Optional[str] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListEventFiltersResponse(_message.Message):
    __slots__ = ("filters", "next_cursor")
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    filters: _containers.RepeatedCompositeFieldContainer[_common_pb2.EventFilter]
    next_cursor: str
    def __init__(self, filters: _Optional[_Iterable[_Union[_common_pb2.EventFilter, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class UpdateEventFilterRequest(_message.Message):
    __slots__ = ("tenant_id", "filter_id", "description", "replace_event_types", "event_types")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    FILTER_ID_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    REPLACE_EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    filter_id: str
    description: str
    replace_event_types: bool
    event_types: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tenant_id: _Optional[str] = ..., filter_id: _Optional[str] = ..., description: _Optional[str] = ..., replace_event_types: _Optional[bool] = ..., event_types: _Optional[_Iterable[str]] = ...) -> None: ...

class UpdateEventFilterResponse(_message.Message):
    __slots__ = ("filter",)
    FILTER_FIELD_NUMBER: _ClassVar[int]
    filter: _common_pb2.EventFilter
    def __init__(self, filter: _Optional[_Union[_common_pb2.EventFilter, _Mapping]] = ...) -> None: ...

class DeleteEventFilterRequest(_message.Message):
    __slots__ = ("tenant_id", "filter_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    FILTER_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    filter_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., filter_id: _Optional[str] = ...) -> None: ...

class DeleteEventFilterResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CreateSubscriptionRequest(_message.Message):
    __slots__ = ("subscription",)
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    subscription: _common_pb2.Subscription
    def __init__(self, subscription: _Optional[_Union[_common_pb2.Subscription, _Mapping]] = ...) -> None: ...

class CreateSubscriptionResponse(_message.Message):
    __slots__ = ("subscription",)
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    subscription: _common_pb2.Subscription
    def __init__(self, subscription: _Optional[_Union[_common_pb2.Subscription, _Mapping]] = ...) -> None: ...

class GetSubscriptionRequest(_message.Message):
    __slots__ = ("tenant_id", "subscription_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIPTION_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    subscription_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., subscription_id: _Optional[str] = ...) -> None: ...

class GetSubscriptionResponse(_message.Message):
    __slots__ = ("subscription",)
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    subscription: _common_pb2.Subscription
    def __init__(self, subscription: _Optional[_Union[_common_pb2.Subscription, _Mapping]] = ...) -> None: ...

class ListSubscriptionsRequest(_message.Message):
    __slots__ = ("tenant_id", "page_size", "cursor")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    page_size: int
    cursor: str
    def __init__(self, tenant_id: _Optional[str] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListSubscriptionsResponse(_message.Message):
    __slots__ = ("subscriptions", "next_cursor")
    SUBSCRIPTIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    subscriptions: _containers.RepeatedCompositeFieldContainer[_common_pb2.Subscription]
    next_cursor: str
    def __init__(self, subscriptions: _Optional[_Iterable[_Union[_common_pb2.Subscription, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class UpdateSubscriptionRequest(_message.Message):
    __slots__ = ("tenant_id", "subscription_id", "target_id", "filter_id", "active")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIPTION_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    FILTER_ID_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    subscription_id: str
    target_id: str
    filter_id: str
    active: bool
    def __init__(self, tenant_id: _Optional[str] = ..., subscription_id: _Optional[str] = ..., target_id: _Optional[str] = ..., filter_id: _Optional[str] = ..., active: _Optional[bool] = ...) -> None: ...

class UpdateSubscriptionResponse(_message.Message):
    __slots__ = ("subscription",)
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    subscription: _common_pb2.Subscription
    def __init__(self, subscription: _Optional[_Union[_common_pb2.Subscription, _Mapping]] = ...) -> None: ...

class DeleteSubscriptionRequest(_message.Message):
    __slots__ = ("tenant_id", "subscription_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIPTION_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    subscription_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., subscription_id: _Optional[str] = ...) -> None: ...

class DeleteSubscriptionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class TargetOutcome(_message.Message):
    __slots__ = ("tenant_id", "target_id", "succeeded", "at")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    SUCCEEDED_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    target_id: str
    succeeded: bool
    at: _timestamp_pb2.Timestamp
    def __init__(self, tenant_id: _Optional[str] = ..., target_id: _Optional[str] = ..., succeeded: _Optional[bool] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class NoteTargetOutcomesRequest(_message.Message):
    __slots__ = ("outcomes", "disable_after_s")
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    DISABLE_AFTER_S_FIELD_NUMBER: _ClassVar[int]
    outcomes: _containers.RepeatedCompositeFieldContainer[TargetOutcome]
    disable_after_s: float
    def __init__(self, outcomes: _Optional[_Iterable[_Union[TargetOutcome, _Mapping]]] = ..., disable_after_s: _Optional[float] = ...) -> None: ...

class NoteTargetOutcomesResponse(_message.Message):
    __slots__ = ("disabled",)
    DISABLED_FIELD_NUMBER: _ClassVar[int]
    disabled: _containers.RepeatedCompositeFieldContainer[_common_pb2.WebhookTarget]
    def __init__(self, disabled: _Optional[_Iterable[_Union[_common_pb2.WebhookTarget, _Mapping]]] = ...) -> None: ...

class ListTargetFailuresRequest(_message.Message):
    __slots__ = ("tenant_id", "target_id", "since", "limit")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    target_id: str
    since: _timestamp_pb2.Timestamp
    limit: int
    def __init__(self, tenant_id: _Optional[str] = ..., target_id: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., limit: _Optional[int] = ...) -> None: ...

class ListTargetFailuresResponse(_message.Message):
    __slots__ = ("job_ids",)
    JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    job_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, job_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class WebhookSettings(_message.Message):
    __slots__ = ("retry_schedule_s", "retry_statuses")
    RETRY_SCHEDULE_S_FIELD_NUMBER: _ClassVar[int]
    RETRY_STATUSES_FIELD_NUMBER: _ClassVar[int]
    retry_schedule_s: _containers.RepeatedScalarFieldContainer[float]
    retry_statuses: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, retry_schedule_s: _Optional[_Iterable[float]] = ..., retry_statuses: _Optional[_Iterable[int]] = ...) -> None: ...

class GetWebhookSettingsRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class GetWebhookSettingsResponse(_message.Message):
    __slots__ = ("settings",)
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    settings: WebhookSettings
    def __init__(self, settings: _Optional[_Union[WebhookSettings, _Mapping]] = ...) -> None: ...

class SetWebhookSettingsRequest(_message.Message):
    __slots__ = ("tenant_id", "settings")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    settings: WebhookSettings
    def __init__(self, tenant_id: _Optional[str] = ..., settings: _Optional[_Union[WebhookSettings, _Mapping]] = ...) -> None: ...

class SetWebhookSettingsResponse(_message.Message):
    __slots__ = ("settings",)
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    settings: WebhookSettings
    def __init__(self, settings: _Optional[_Union[WebhookSettings, _Mapping]] = ...) -> None: ...

class ListActiveSubscriptionsRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class ActiveSubscription(_message.Message):
    __slots__ = ("subscription_id", "target", "event_types")
    SUBSCRIPTION_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    subscription_id: str
    target: _common_pb2.WebhookTarget
    event_types: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, subscription_id: _Optional[str] = ..., target: _Optional[_Union[_common_pb2.WebhookTarget, _Mapping]] = ..., event_types: _Optional[_Iterable[str]] = ...) -> None: ...

class ListActiveSubscriptionsResponse(_message.Message):
    __slots__ = ("subscriptions",)
    SUBSCRIPTIONS_FIELD_NUMBER: _ClassVar[int]
    subscriptions: _containers.RepeatedCompositeFieldContainer[ActiveSubscription]
    def __init__(self, subscriptions: _Optional[_Iterable[_Union[ActiveSubscription, _Mapping]]] = ...) -> None: ...

class RecordEventRequest(_message.Message):
    __slots__ = ("tenant_id", "event_id", "event_type", "drafts", "target_ids", "payload")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    DRAFTS_FIELD_NUMBER: _ClassVar[int]
    TARGET_IDS_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    event_id: str
    event_type: str
    drafts: _containers.RepeatedCompositeFieldContainer[JobDraft]
    target_ids: _containers.RepeatedScalarFieldContainer[str]
    payload: bytes
    def __init__(self, tenant_id: _Optional[str] = ..., event_id: _Optional[str] = ..., event_type: _Optional[str] = ..., drafts: _Optional[_Iterable[_Union[JobDraft, _Mapping]]] = ..., target_ids: _Optional[_Iterable[str]] = ..., payload: _Optional[bytes] = ...) -> None: ...

class RecordEventResponse(_message.Message):
    __slots__ = ("replayed", "deliveries", "jobs", "rejection", "detail")
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    REJECTION_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    replayed: bool
    deliveries: _containers.RepeatedCompositeFieldContainer[_common_pb2.EventDelivery]
    jobs: _containers.RepeatedCompositeFieldContainer[_common_pb2.Job]
    rejection: Rejection
    detail: str
    def __init__(self, replayed: _Optional[bool] = ..., deliveries: _Optional[_Iterable[_Union[_common_pb2.EventDelivery, _Mapping]]] = ..., jobs: _Optional[_Iterable[_Union[_common_pb2.Job, _Mapping]]] = ..., rejection: _Optional[_Union[Rejection, str]] = ..., detail: _Optional[str] = ...) -> None: ...

class InboundConfig(_message.Message):
    __slots__ = ("provider", "public_info", "updated_at")
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_INFO_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    provider: str
    public_info: str
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, provider: _Optional[str] = ..., public_info: _Optional[str] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class PutInboundConfigRequest(_message.Message):
    __slots__ = ("tenant_id", "provider", "material", "public_info")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    MATERIAL_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_INFO_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    provider: str
    material: bytes
    public_info: str
    def __init__(self, tenant_id: _Optional[str] = ..., provider: _Optional[str] = ..., material: _Optional[bytes] = ..., public_info: _Optional[str] = ...) -> None: ...

class PutInboundConfigResponse(_message.Message):
    __slots__ = ("config",)
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    config: InboundConfig
    def __init__(self, config: _Optional[_Union[InboundConfig, _Mapping]] = ...) -> None: ...

class ListInboundConfigsRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class ListInboundConfigsResponse(_message.Message):
    __slots__ = ("configs",)
    CONFIGS_FIELD_NUMBER: _ClassVar[int]
    configs: _containers.RepeatedCompositeFieldContainer[InboundConfig]
    def __init__(self, configs: _Optional[_Iterable[_Union[InboundConfig, _Mapping]]] = ...) -> None: ...

class DeleteInboundConfigRequest(_message.Message):
    __slots__ = ("tenant_id", "provider")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    provider: str
    def __init__(self, tenant_id: _Optional[str] = ..., provider: _Optional[str] = ...) -> None: ...

class DeleteInboundConfigResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetInboundKeyRequest(_message.Message):
    __slots__ = ("tenant_id", "provider")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    provider: str
    def __init__(self, tenant_id: _Optional[str] = ..., provider: _Optional[str] = ...) -> None: ...

class GetInboundKeyResponse(_message.Message):
    __slots__ = ("found", "sealed")
    FOUND_FIELD_NUMBER: _ClassVar[int]
    SEALED_FIELD_NUMBER: _ClassVar[int]
    found: bool
    sealed: bytes
    def __init__(self, found: _Optional[bool] = ..., sealed: _Optional[bytes] = ...) -> None: ...

class InboundEvent(_message.Message):
    __slots__ = ("provider", "tenant_id", "event_id", "type", "provider_message_id", "recipient", "occurred_at", "plan", "raw")
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    RECIPIENT_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    RAW_FIELD_NUMBER: _ClassVar[int]
    provider: str
    tenant_id: str
    event_id: str
    type: str
    provider_message_id: str
    recipient: str
    occurred_at: _timestamp_pb2.Timestamp
    plan: str
    raw: bytes
    def __init__(self, provider: _Optional[str] = ..., tenant_id: _Optional[str] = ..., event_id: _Optional[str] = ..., type: _Optional[str] = ..., provider_message_id: _Optional[str] = ..., recipient: _Optional[str] = ..., occurred_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., plan: _Optional[str] = ..., raw: _Optional[bytes] = ...) -> None: ...

class RecordInboundEventsRequest(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[InboundEvent]
    def __init__(self, events: _Optional[_Iterable[_Union[InboundEvent, _Mapping]]] = ...) -> None: ...

class RecordInboundEventsResponse(_message.Message):
    __slots__ = ("recorded", "duplicates")
    RECORDED_FIELD_NUMBER: _ClassVar[int]
    DUPLICATES_FIELD_NUMBER: _ClassVar[int]
    recorded: int
    duplicates: int
    def __init__(self, recorded: _Optional[int] = ..., duplicates: _Optional[int] = ...) -> None: ...

class ProviderEvent(_message.Message):
    __slots__ = ("event_id", "provider", "type", "recipient", "job_id", "plan", "applied", "occurred_at", "received_at")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    RECIPIENT_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    RECEIVED_AT_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    provider: str
    type: str
    recipient: str
    job_id: str
    plan: str
    applied: bool
    occurred_at: _timestamp_pb2.Timestamp
    received_at: _timestamp_pb2.Timestamp
    def __init__(self, event_id: _Optional[str] = ..., provider: _Optional[str] = ..., type: _Optional[str] = ..., recipient: _Optional[str] = ..., job_id: _Optional[str] = ..., plan: _Optional[str] = ..., applied: _Optional[bool] = ..., occurred_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., received_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListJobEventsRequest(_message.Message):
    __slots__ = ("tenant_id", "job_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    job_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., job_id: _Optional[str] = ...) -> None: ...

class ListJobEventsResponse(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[ProviderEvent]
    def __init__(self, events: _Optional[_Iterable[_Union[ProviderEvent, _Mapping]]] = ...) -> None: ...

class ListBillingEventsRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class ListBillingEventsResponse(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[ProviderEvent]
    def __init__(self, events: _Optional[_Iterable[_Union[ProviderEvent, _Mapping]]] = ...) -> None: ...

class QueueOperatorEmailRequest(_message.Message):
    __slots__ = ("kind", "to", "subject", "text", "dedupe_key")
    KIND_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    DEDUPE_KEY_FIELD_NUMBER: _ClassVar[int]
    kind: str
    to: _containers.RepeatedScalarFieldContainer[str]
    subject: str
    text: str
    dedupe_key: str
    def __init__(self, kind: _Optional[str] = ..., to: _Optional[_Iterable[str]] = ..., subject: _Optional[str] = ..., text: _Optional[str] = ..., dedupe_key: _Optional[str] = ...) -> None: ...

class QueueOperatorEmailResponse(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ListPlatformEmailsRequest(_message.Message):
    __slots__ = ("tenant_id", "kind", "page_size", "cursor")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    kind: str
    page_size: int
    cursor: str
    def __init__(self, tenant_id: _Optional[str] = ..., kind: _Optional[str] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListPlatformEmailsResponse(_message.Message):
    __slots__ = ("entries", "next_cursor")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[_common_pb2.PlatformEmail]
    next_cursor: str
    def __init__(self, entries: _Optional[_Iterable[_Union[_common_pb2.PlatformEmail, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...
