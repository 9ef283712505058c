import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class JobStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_STATUS_UNSPECIFIED: _ClassVar[JobStatus]
    JOB_STATUS_PENDING: _ClassVar[JobStatus]
    JOB_STATUS_QUEUED: _ClassVar[JobStatus]
    JOB_STATUS_DELIVERING: _ClassVar[JobStatus]
    JOB_STATUS_DELIVERED: _ClassVar[JobStatus]
    JOB_STATUS_FAILED: _ClassVar[JobStatus]
    JOB_STATUS_SUPPRESSED: _ClassVar[JobStatus]
    JOB_STATUS_BOUNCED: _ClassVar[JobStatus]
    JOB_STATUS_COMPLAINED: _ClassVar[JobStatus]
    JOB_STATUS_SKIPPED: _ClassVar[JobStatus]

class Priority(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PRIORITY_UNSPECIFIED: _ClassVar[Priority]
    PRIORITY_LOW: _ClassVar[Priority]
    PRIORITY_NORMAL: _ClassVar[Priority]
    PRIORITY_CRITICAL: _ClassVar[Priority]

class Channel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHANNEL_UNSPECIFIED: _ClassVar[Channel]
    CHANNEL_WEBHOOK: _ClassVar[Channel]
    CHANNEL_EMAIL: _ClassVar[Channel]
    CHANNEL_PLATFORM_EMAIL: _ClassVar[Channel]

class Plan(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PLAN_UNSPECIFIED: _ClassVar[Plan]
    PLAN_FREE: _ClassVar[Plan]
    PLAN_INDIE: _ClassVar[Plan]
    PLAN_STARTUP: _ClassVar[Plan]

class AttemptOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ATTEMPT_OUTCOME_UNSPECIFIED: _ClassVar[AttemptOutcome]
    ATTEMPT_OUTCOME_SUCCEEDED: _ClassVar[AttemptOutcome]
    ATTEMPT_OUTCOME_TRANSIENT_FAILURE: _ClassVar[AttemptOutcome]
    ATTEMPT_OUTCOME_PERMANENT_FAILURE: _ClassVar[AttemptOutcome]
    ATTEMPT_OUTCOME_SKIPPED: _ClassVar[AttemptOutcome]

class EmailProvider(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EMAIL_PROVIDER_UNSPECIFIED: _ClassVar[EmailProvider]
    EMAIL_PROVIDER_SENDGRID: _ClassVar[EmailProvider]
    EMAIL_PROVIDER_RESEND: _ClassVar[EmailProvider]
    EMAIL_PROVIDER_POSTMARK: _ClassVar[EmailProvider]
    EMAIL_PROVIDER_SMTP: _ClassVar[EmailProvider]

class SmtpTlsMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SMTP_TLS_MODE_UNSPECIFIED: _ClassVar[SmtpTlsMode]
    SMTP_TLS_MODE_STARTTLS: _ClassVar[SmtpTlsMode]
    SMTP_TLS_MODE_IMPLICIT: _ClassVar[SmtpTlsMode]
    SMTP_TLS_MODE_NONE: _ClassVar[SmtpTlsMode]
JOB_STATUS_UNSPECIFIED: JobStatus
JOB_STATUS_PENDING: JobStatus
JOB_STATUS_QUEUED: JobStatus
JOB_STATUS_DELIVERING: JobStatus
JOB_STATUS_DELIVERED: JobStatus
JOB_STATUS_FAILED: JobStatus
JOB_STATUS_SUPPRESSED: JobStatus
JOB_STATUS_BOUNCED: JobStatus
JOB_STATUS_COMPLAINED: JobStatus
JOB_STATUS_SKIPPED: JobStatus
PRIORITY_UNSPECIFIED: Priority
PRIORITY_LOW: Priority
PRIORITY_NORMAL: Priority
PRIORITY_CRITICAL: Priority
CHANNEL_UNSPECIFIED: Channel
CHANNEL_WEBHOOK: Channel
CHANNEL_EMAIL: Channel
CHANNEL_PLATFORM_EMAIL: Channel
PLAN_UNSPECIFIED: Plan
PLAN_FREE: Plan
PLAN_INDIE: Plan
PLAN_STARTUP: Plan
ATTEMPT_OUTCOME_UNSPECIFIED: AttemptOutcome
ATTEMPT_OUTCOME_SUCCEEDED: AttemptOutcome
ATTEMPT_OUTCOME_TRANSIENT_FAILURE: AttemptOutcome
ATTEMPT_OUTCOME_PERMANENT_FAILURE: AttemptOutcome
ATTEMPT_OUTCOME_SKIPPED: AttemptOutcome
EMAIL_PROVIDER_UNSPECIFIED: EmailProvider
EMAIL_PROVIDER_SENDGRID: EmailProvider
EMAIL_PROVIDER_RESEND: EmailProvider
EMAIL_PROVIDER_POSTMARK: EmailProvider
EMAIL_PROVIDER_SMTP: EmailProvider
SMTP_TLS_MODE_UNSPECIFIED: SmtpTlsMode
SMTP_TLS_MODE_STARTTLS: SmtpTlsMode
SMTP_TLS_MODE_IMPLICIT: SmtpTlsMode
SMTP_TLS_MODE_NONE: SmtpTlsMode

class WebhookRequest(_message.Message):
    __slots__ = ("url", "headers", "body", "content_type", "sealed_headers")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    URL_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    SEALED_HEADERS_FIELD_NUMBER: _ClassVar[int]
    url: str
    headers: _containers.ScalarMap[str, str]
    body: bytes
    content_type: str
    sealed_headers: bytes
    def __init__(self, url: _Optional[str] = ..., headers: _Optional[_Mapping[str, str]] = ..., body: _Optional[bytes] = ..., content_type: _Optional[str] = ..., sealed_headers: _Optional[bytes] = ...) -> None: ...

class EmailAddress(_message.Message):
    __slots__ = ("email", "name")
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    email: str
    name: str
    def __init__(self, email: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class EmailRequest(_message.Message):
    __slots__ = ("to", "cc", "bcc", "reply_to", "subject", "text", "html", "headers", "tags", "metadata", "provider_id", "fallback_provider_id")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    CC_FIELD_NUMBER: _ClassVar[int]
    BCC_FIELD_NUMBER: _ClassVar[int]
    REPLY_TO_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    HTML_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    to: _containers.RepeatedCompositeFieldContainer[EmailAddress]
    cc: _containers.RepeatedCompositeFieldContainer[EmailAddress]
    bcc: _containers.RepeatedCompositeFieldContainer[EmailAddress]
    reply_to: EmailAddress
    subject: str
    text: str
    html: str
    headers: _containers.ScalarMap[str, str]
    tags: _containers.RepeatedScalarFieldContainer[str]
    metadata: _containers.ScalarMap[str, str]
    provider_id: str
    fallback_provider_id: str
    def __init__(self, to: _Optional[_Iterable[_Union[EmailAddress, _Mapping]]] = ..., cc: _Optional[_Iterable[_Union[EmailAddress, _Mapping]]] = ..., bcc: _Optional[_Iterable[_Union[EmailAddress, _Mapping]]] = ..., reply_to: _Optional[_Union[EmailAddress, _Mapping]] = ..., subject: _Optional[str] = ..., text: _Optional[str] = ..., html: _Optional[str] = ..., headers: _Optional[_Mapping[str, str]] = ..., tags: _Optional[_Iterable[str]] = ..., metadata: _Optional[_Mapping[str, str]] = ..., provider_id: _Optional[str] = ..., fallback_provider_id: _Optional[str] = ..., **kwargs) -> None: ...

class Job(_message.Message):
    __slots__ = ("ordering_key", "id", "tenant_id", "channel", "status", "priority", "idempotency_key", "attempt_count", "last_error", "created_at", "updated_at", "webhook", "email", "run", "provider_id", "provider_message_id", "target_id", "provider_delivered_at", "status_event_id", "waiting_reason", "event_id", "origin_job_id", "next_attempt_at", "payload_expunged_at", "run_started_at")
    ORDERING_KEY_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_COUNT_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_DELIVERED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    WAITING_REASON_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_JOB_ID_FIELD_NUMBER: _ClassVar[int]
    NEXT_ATTEMPT_AT_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_EXPUNGED_AT_FIELD_NUMBER: _ClassVar[int]
    RUN_STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    ordering_key: str
    id: str
    tenant_id: str
    channel: Channel
    status: JobStatus
    priority: Priority
    idempotency_key: str
    attempt_count: int
    last_error: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    webhook: WebhookRequest
    email: EmailRequest
    run: int
    provider_id: str
    provider_message_id: str
    target_id: str
    provider_delivered_at: _timestamp_pb2.Timestamp
    status_event_id: str
    waiting_reason: str
    event_id: str
    origin_job_id: str
    next_attempt_at: _timestamp_pb2.Timestamp
    payload_expunged_at: _timestamp_pb2.Timestamp
    run_started_at: _timestamp_pb2.Timestamp
    def __init__(self, ordering_key: _Optional[str] = ..., id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., channel: _Optional[_Union[Channel, str]] = ..., status: _Optional[_Union[JobStatus, str]] = ..., priority: _Optional[_Union[Priority, str]] = ..., idempotency_key: _Optional[str] = ..., attempt_count: _Optional[int] = ..., last_error: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., webhook: _Optional[_Union[WebhookRequest, _Mapping]] = ..., email: _Optional[_Union[EmailRequest, _Mapping]] = ..., run: _Optional[int] = ..., provider_id: _Optional[str] = ..., provider_message_id: _Optional[str] = ..., target_id: _Optional[str] = ..., provider_delivered_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., status_event_id: _Optional[str] = ..., waiting_reason: _Optional[str] = ..., event_id: _Optional[str] = ..., origin_job_id: _Optional[str] = ..., next_attempt_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., payload_expunged_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., run_started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Attempt(_message.Message):
    __slots__ = ("job_id", "number", "target", "outcome", "status_code", "duration_ms", "error", "started_at", "provider_id", "provider_message_id", "walk", "error_class", "response_headers", "response_excerpt")
    class ResponseHeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    WALK_FIELD_NUMBER: _ClassVar[int]
    ERROR_CLASS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_HEADERS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_EXCERPT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    number: int
    target: str
    outcome: AttemptOutcome
    status_code: int
    duration_ms: int
    error: str
    started_at: _timestamp_pb2.Timestamp
    provider_id: str
    provider_message_id: str
    walk: int
    error_class: str
    response_headers: _containers.ScalarMap[str, str]
    response_excerpt: str
    def __init__(self, job_id: _Optional[str] = ..., number: _Optional[int] = ..., target: _Optional[str] = ..., outcome: _Optional[_Union[AttemptOutcome, str]] = ..., status_code: _Optional[int] = ..., duration_ms: _Optional[int] = ..., error: _Optional[str] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., provider_id: _Optional[str] = ..., provider_message_id: _Optional[str] = ..., walk: _Optional[int] = ..., error_class: _Optional[str] = ..., response_headers: _Optional[_Mapping[str, str]] = ..., response_excerpt: _Optional[str] = ...) -> None: ...

class DeadLetter(_message.Message):
    __slots__ = ("job_id", "tenant_id", "channel", "error", "dead_lettered_at", "attempts", "work_message", "work_subject", "stream_sequence", "retried_at", "run")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTERED_AT_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    WORK_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    WORK_SUBJECT_FIELD_NUMBER: _ClassVar[int]
    STREAM_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    RETRIED_AT_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    tenant_id: str
    channel: Channel
    error: str
    dead_lettered_at: _timestamp_pb2.Timestamp
    attempts: int
    work_message: bytes
    work_subject: str
    stream_sequence: int
    retried_at: _timestamp_pb2.Timestamp
    run: int
    def __init__(self, job_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., channel: _Optional[_Union[Channel, str]] = ..., error: _Optional[str] = ..., dead_lettered_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., attempts: _Optional[int] = ..., work_message: _Optional[bytes] = ..., work_subject: _Optional[str] = ..., stream_sequence: _Optional[int] = ..., retried_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., run: _Optional[int] = ...) -> None: ...

class PlatformEmail(_message.Message):
    __slots__ = ("id", "tenant_id", "kind", "recipient", "subject", "status", "attempts", "provider_message_id", "error", "created_at", "finished_at", "job_status")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    RECIPIENT_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    JOB_STATUS_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    kind: str
    recipient: str
    subject: str
    status: str
    attempts: int
    provider_message_id: str
    error: str
    created_at: _timestamp_pb2.Timestamp
    finished_at: _timestamp_pb2.Timestamp
    job_status: JobStatus
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., kind: _Optional[str] = ..., recipient: _Optional[str] = ..., subject: _Optional[str] = ..., status: _Optional[str] = ..., attempts: _Optional[int] = ..., provider_message_id: _Optional[str] = ..., error: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., job_status: _Optional[_Union[JobStatus, str]] = ...) -> None: ...

class DnsRecord(_message.Message):
    __slots__ = ("type", "name", "value", "status", "purpose", "priority")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PURPOSE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    type: str
    name: str
    value: str
    status: str
    purpose: str
    priority: int
    def __init__(self, type: _Optional[str] = ..., name: _Optional[str] = ..., value: _Optional[str] = ..., status: _Optional[str] = ..., purpose: _Optional[str] = ..., priority: _Optional[int] = ...) -> None: ...

class SendingDomain(_message.Message):
    __slots__ = ("id", "tenant_id", "name", "provider_id", "provider", "provider_domain_id", "verified", "records", "provider_status", "created_at", "updated_at", "verified_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_DOMAIN_ID_FIELD_NUMBER: _ClassVar[int]
    VERIFIED_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_STATUS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    VERIFIED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    name: str
    provider_id: str
    provider: EmailProvider
    provider_domain_id: str
    verified: bool
    records: _containers.RepeatedCompositeFieldContainer[DnsRecord]
    provider_status: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    verified_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., name: _Optional[str] = ..., provider_id: _Optional[str] = ..., provider: _Optional[_Union[EmailProvider, str]] = ..., provider_domain_id: _Optional[str] = ..., verified: _Optional[bool] = ..., records: _Optional[_Iterable[_Union[DnsRecord, _Mapping]]] = ..., provider_status: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., verified_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Tenant(_message.Message):
    __slots__ = ("id", "name", "plan", "disabled", "created_at", "rate_per_min", "webhooks_per_month", "emails_per_month", "contact_email", "payload_retention_days", "row_retention_days")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    DISABLED_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    RATE_PER_MIN_FIELD_NUMBER: _ClassVar[int]
    WEBHOOKS_PER_MONTH_FIELD_NUMBER: _ClassVar[int]
    EMAILS_PER_MONTH_FIELD_NUMBER: _ClassVar[int]
    CONTACT_EMAIL_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_RETENTION_DAYS_FIELD_NUMBER: _ClassVar[int]
    ROW_RETENTION_DAYS_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    plan: Plan
    disabled: bool
    created_at: _timestamp_pb2.Timestamp
    rate_per_min: int
    webhooks_per_month: int
    emails_per_month: int
    contact_email: str
    payload_retention_days: int
    row_retention_days: int
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., plan: _Optional[_Union[Plan, str]] = ..., disabled: _Optional[bool] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., rate_per_min: _Optional[int] = ..., webhooks_per_month: _Optional[int] = ..., emails_per_month: _Optional[int] = ..., contact_email: _Optional[str] = ..., payload_retention_days: _Optional[int] = ..., row_retention_days: _Optional[int] = ...) -> None: ...

class Usage(_message.Message):
    __slots__ = ("period", "webhooks", "emails", "webhooks_limit", "emails_limit", "shared_limit")
    PERIOD_FIELD_NUMBER: _ClassVar[int]
    WEBHOOKS_FIELD_NUMBER: _ClassVar[int]
    EMAILS_FIELD_NUMBER: _ClassVar[int]
    WEBHOOKS_LIMIT_FIELD_NUMBER: _ClassVar[int]
    EMAILS_LIMIT_FIELD_NUMBER: _ClassVar[int]
    SHARED_LIMIT_FIELD_NUMBER: _ClassVar[int]
    period: str
    webhooks: int
    emails: int
    webhooks_limit: int
    emails_limit: int
    shared_limit: int
    def __init__(self, period: _Optional[str] = ..., webhooks: _Optional[int] = ..., emails: _Optional[int] = ..., webhooks_limit: _Optional[int] = ..., emails_limit: _Optional[int] = ..., shared_limit: _Optional[int] = ...) -> None: ...

class SuppressionEntry(_message.Message):
    __slots__ = ("address", "reason", "source_event_id", "created_at")
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SOURCE_EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    address: str
    reason: str
    source_event_id: str
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, address: _Optional[str] = ..., reason: _Optional[str] = ..., source_event_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ApiKey(_message.Message):
    __slots__ = ("id", "tenant_id", "name", "public_id", "created_at", "revoked_at", "last_used_at", "scopes")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    REVOKED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_USED_AT_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    name: str
    public_id: str
    created_at: _timestamp_pb2.Timestamp
    revoked_at: _timestamp_pb2.Timestamp
    last_used_at: _timestamp_pb2.Timestamp
    scopes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., name: _Optional[str] = ..., public_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., revoked_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_used_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., scopes: _Optional[_Iterable[str]] = ...) -> None: ...

class SmtpSettings(_message.Message):
    __slots__ = ("host", "port", "username", "password", "tls_mode")
    HOST_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    PASSWORD_FIELD_NUMBER: _ClassVar[int]
    TLS_MODE_FIELD_NUMBER: _ClassVar[int]
    host: str
    port: int
    username: str
    password: str
    tls_mode: SmtpTlsMode
    def __init__(self, host: _Optional[str] = ..., port: _Optional[int] = ..., username: _Optional[str] = ..., password: _Optional[str] = ..., tls_mode: _Optional[_Union[SmtpTlsMode, str]] = ...) -> None: ...

class ProviderCredential(_message.Message):
    __slots__ = ("provider", "api_key", "smtp", "account_token")
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    SMTP_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    provider: EmailProvider
    api_key: str
    smtp: SmtpSettings
    account_token: str
    def __init__(self, provider: _Optional[_Union[EmailProvider, str]] = ..., api_key: _Optional[str] = ..., smtp: _Optional[_Union[SmtpSettings, _Mapping]] = ..., account_token: _Optional[str] = ...) -> None: ...

class ProviderConfig(_message.Message):
    __slots__ = ("id", "tenant_id", "provider", "priority", "base_url", "options", "masked_secret", "secret_error", "smtp_host", "smtp_port", "smtp_username", "smtp_tls_mode", "created_at", "updated_at", "masked_account_token")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    MASKED_SECRET_FIELD_NUMBER: _ClassVar[int]
    SECRET_ERROR_FIELD_NUMBER: _ClassVar[int]
    SMTP_HOST_FIELD_NUMBER: _ClassVar[int]
    SMTP_PORT_FIELD_NUMBER: _ClassVar[int]
    SMTP_USERNAME_FIELD_NUMBER: _ClassVar[int]
    SMTP_TLS_MODE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    MASKED_ACCOUNT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    provider: EmailProvider
    priority: int
    base_url: str
    options: _containers.ScalarMap[str, str]
    masked_secret: str
    secret_error: str
    smtp_host: str
    smtp_port: int
    smtp_username: str
    smtp_tls_mode: SmtpTlsMode
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    masked_account_token: str
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., provider: _Optional[_Union[EmailProvider, str]] = ..., priority: _Optional[int] = ..., base_url: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ..., masked_secret: _Optional[str] = ..., secret_error: _Optional[str] = ..., smtp_host: _Optional[str] = ..., smtp_port: _Optional[int] = ..., smtp_username: _Optional[str] = ..., smtp_tls_mode: _Optional[_Union[SmtpTlsMode, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., masked_account_token: _Optional[str] = ...) -> None: ...

class WebhookSecretStatus(_message.Message):
    __slots__ = ("exists", "created_at", "rotated_at", "previous_expires_at")
    EXISTS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    ROTATED_AT_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    exists: bool
    created_at: _timestamp_pb2.Timestamp
    rotated_at: _timestamp_pb2.Timestamp
    previous_expires_at: _timestamp_pb2.Timestamp
    def __init__(self, exists: _Optional[bool] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., rotated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., previous_expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class WebhookTarget(_message.Message):
    __slots__ = ("id", "tenant_id", "url", "description", "headers", "rate_limit_per_min", "enabled", "disabled_reason", "created_at", "updated_at", "failing_since", "max_in_flight", "sealed_headers", "breaker", "last_success_at")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMIT_PER_MIN_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    DISABLED_REASON_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    FAILING_SINCE_FIELD_NUMBER: _ClassVar[int]
    MAX_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    SEALED_HEADERS_FIELD_NUMBER: _ClassVar[int]
    BREAKER_FIELD_NUMBER: _ClassVar[int]
    LAST_SUCCESS_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    url: str
    description: str
    headers: _containers.ScalarMap[str, str]
    rate_limit_per_min: int
    enabled: bool
    disabled_reason: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    failing_since: _timestamp_pb2.Timestamp
    max_in_flight: int
    sealed_headers: bytes
    breaker: str
    last_success_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., url: _Optional[str] = ..., description: _Optional[str] = ..., headers: _Optional[_Mapping[str, str]] = ..., rate_limit_per_min: _Optional[int] = ..., enabled: _Optional[bool] = ..., disabled_reason: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., failing_since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., max_in_flight: _Optional[int] = ..., sealed_headers: _Optional[bytes] = ..., breaker: _Optional[str] = ..., last_success_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class EventFilter(_message.Message):
    __slots__ = ("id", "tenant_id", "description", "event_types", "created_at", "updated_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    description: str
    event_types: _containers.RepeatedScalarFieldContainer[str]
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., description: _Optional[str] = ..., event_types: _Optional[_Iterable[str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Subscription(_message.Message):
    __slots__ = ("id", "tenant_id", "target_id", "filter_id", "active", "created_at", "updated_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    FILTER_ID_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    target_id: str
    filter_id: str
    active: bool
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., target_id: _Optional[str] = ..., filter_id: _Optional[str] = ..., active: _Optional[bool] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class EventDelivery(_message.Message):
    __slots__ = ("job_id", "target_id", "status", "reason")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    target_id: str
    status: JobStatus
    reason: str
    def __init__(self, job_id: _Optional[str] = ..., target_id: _Optional[str] = ..., status: _Optional[_Union[JobStatus, str]] = ..., reason: _Optional[str] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("id", "event_type", "payload", "content_type", "created_at", "deliveries", "ordering_key", "payload_expunged_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    ORDERING_KEY_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_EXPUNGED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    event_type: str
    payload: bytes
    content_type: str
    created_at: _timestamp_pb2.Timestamp
    deliveries: _containers.RepeatedCompositeFieldContainer[EventDelivery]
    ordering_key: str
    payload_expunged_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., event_type: _Optional[str] = ..., payload: _Optional[bytes] = ..., content_type: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deliveries: _Optional[_Iterable[_Union[EventDelivery, _Mapping]]] = ..., ordering_key: _Optional[str] = ..., payload_expunged_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class TargetPing(_message.Message):
    __slots__ = ("ping_id", "sent_at", "status_code", "duration_ms", "response_excerpt", "error")
    PING_ID_FIELD_NUMBER: _ClassVar[int]
    SENT_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_EXCERPT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    ping_id: str
    sent_at: _timestamp_pb2.Timestamp
    status_code: int
    duration_ms: int
    response_excerpt: str
    error: str
    def __init__(self, ping_id: _Optional[str] = ..., sent_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., status_code: _Optional[int] = ..., duration_ms: _Optional[int] = ..., response_excerpt: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...

class ErasureReceipt(_message.Message):
    __slots__ = ("tenant_id", "tenant_hash", "erased_at", "rows", "bus", "deliveries_awaited", "deliveries_unfinished", "bus_not_removed")
    class RowsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class BusEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_HASH_FIELD_NUMBER: _ClassVar[int]
    ERASED_AT_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    BUS_FIELD_NUMBER: _ClassVar[int]
    DELIVERIES_AWAITED_FIELD_NUMBER: _ClassVar[int]
    DELIVERIES_UNFINISHED_FIELD_NUMBER: _ClassVar[int]
    BUS_NOT_REMOVED_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    tenant_hash: str
    erased_at: _timestamp_pb2.Timestamp
    rows: _containers.ScalarMap[str, int]
    bus: _containers.ScalarMap[str, int]
    deliveries_awaited: int
    deliveries_unfinished: int
    bus_not_removed: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tenant_id: _Optional[str] = ..., tenant_hash: _Optional[str] = ..., erased_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., rows: _Optional[_Mapping[str, int]] = ..., bus: _Optional[_Mapping[str, int]] = ..., deliveries_awaited: _Optional[int] = ..., deliveries_unfinished: _Optional[int] = ..., bus_not_removed: _Optional[_Iterable[str]] = ...) -> None: ...

class AuditEntry(_message.Message):
    __slots__ = ("id", "tenant_id", "at", "actor_kind", "actor_id", "actor_name", "action", "resource_id", "changes_json", "address")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    ACTOR_KIND_FIELD_NUMBER: _ClassVar[int]
    ACTOR_ID_FIELD_NUMBER: _ClassVar[int]
    ACTOR_NAME_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    CHANGES_JSON_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    at: _timestamp_pb2.Timestamp
    actor_kind: str
    actor_id: str
    actor_name: str
    action: str
    resource_id: str
    changes_json: str
    address: str
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., actor_kind: _Optional[str] = ..., actor_id: _Optional[str] = ..., actor_name: _Optional[str] = ..., action: _Optional[str] = ..., resource_id: _Optional[str] = ..., changes_json: _Optional[str] = ..., address: _Optional[str] = ...) -> None: ...

class Operator(_message.Message):
    __slots__ = ("id", "name", "created_at", "revoked_at", "last_used_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    REVOKED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_USED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    created_at: _timestamp_pb2.Timestamp
    revoked_at: _timestamp_pb2.Timestamp
    last_used_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., revoked_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_used_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...
