import datetime

from google.protobuf import any_pb2 as _any_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from herald.v1 import common_pb2 as _common_pb2
from herald.v1 import ledger_jobs_pb2 as _ledger_jobs_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetWebhookTargetSecretRequest(_message.Message):
    __slots__ = ("target_id",)
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    def __init__(self, target_id: _Optional[str] = ...) -> None: ...

class GetWebhookTargetSecretResponse(_message.Message):
    __slots__ = ("key", "public_key")
    KEY_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_KEY_FIELD_NUMBER: _ClassVar[int]
    key: str
    public_key: str
    def __init__(self, key: _Optional[str] = ..., public_key: _Optional[str] = ...) -> None: ...

class RotateWebhookTargetSecretRequest(_message.Message):
    __slots__ = ("target_id", "key", "overlap_s", "algorithm")
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    OVERLAP_S_FIELD_NUMBER: _ClassVar[int]
    ALGORITHM_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    key: str
    overlap_s: float
    algorithm: str
    def __init__(self, target_id: _Optional[str] = ..., key: _Optional[str] = ..., overlap_s: _Optional[float] = ..., algorithm: _Optional[str] = ...) -> None: ...

class RotateWebhookTargetSecretResponse(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: str
    def __init__(self, key: _Optional[str] = ...) -> None: ...

class TestWebhookTargetRequest(_message.Message):
    __slots__ = ("target_id",)
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    def __init__(self, target_id: _Optional[str] = ...) -> None: ...

class TestWebhookTargetResponse(_message.Message):
    __slots__ = ("ping",)
    PING_FIELD_NUMBER: _ClassVar[int]
    ping: _common_pb2.TargetPing
    def __init__(self, ping: _Optional[_Union[_common_pb2.TargetPing, _Mapping]] = ...) -> None: ...

class RecoverWebhookTargetRequest(_message.Message):
    __slots__ = ("target_id", "since", "until")
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    since: _timestamp_pb2.Timestamp
    until: _timestamp_pb2.Timestamp
    def __init__(self, target_id: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., until: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RecoverWebhookTargetResponse(_message.Message):
    __slots__ = ("job_ids",)
    JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    job_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, job_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class GetWebhookRetryScheduleRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetWebhookRetryScheduleResponse(_message.Message):
    __slots__ = ("schedule",)
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: WebhookRetrySchedule
    def __init__(self, schedule: _Optional[_Union[WebhookRetrySchedule, _Mapping]] = ...) -> None: ...

class SetWebhookRetryScheduleResponse(_message.Message):
    __slots__ = ("schedule",)
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: WebhookRetrySchedule
    def __init__(self, schedule: _Optional[_Union[WebhookRetrySchedule, _Mapping]] = ...) -> None: ...

class SetWebhookRetryScheduleRequest(_message.Message):
    __slots__ = ("delays_s", "retry_statuses")
    DELAYS_S_FIELD_NUMBER: _ClassVar[int]
    RETRY_STATUSES_FIELD_NUMBER: _ClassVar[int]
    delays_s: _containers.RepeatedScalarFieldContainer[float]
    retry_statuses: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, delays_s: _Optional[_Iterable[float]] = ..., retry_statuses: _Optional[_Iterable[int]] = ...) -> None: ...

class WebhookRetrySchedule(_message.Message):
    __slots__ = ("delays_s", "retry_statuses", "custom", "max_attempts")
    DELAYS_S_FIELD_NUMBER: _ClassVar[int]
    RETRY_STATUSES_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_FIELD_NUMBER: _ClassVar[int]
    MAX_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    delays_s: _containers.RepeatedScalarFieldContainer[float]
    retry_statuses: _containers.RepeatedScalarFieldContainer[int]
    custom: bool
    max_attempts: int
    def __init__(self, delays_s: _Optional[_Iterable[float]] = ..., retry_statuses: _Optional[_Iterable[int]] = ..., custom: _Optional[bool] = ..., max_attempts: _Optional[int] = ...) -> None: ...

class SubmitWebhooksRequest(_message.Message):
    __slots__ = ("webhook",)
    WEBHOOK_FIELD_NUMBER: _ClassVar[int]
    webhook: SendWebhookRequest
    def __init__(self, webhook: _Optional[_Union[SendWebhookRequest, _Mapping]] = ...) -> None: ...

class SubmitWebhooksResponse(_message.Message):
    __slots__ = ("index", "id", "status", "replayed", "error")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    index: int
    id: str
    status: _common_pb2.JobStatus
    replayed: bool
    error: ItemError
    def __init__(self, index: _Optional[int] = ..., id: _Optional[str] = ..., status: _Optional[_Union[_common_pb2.JobStatus, str]] = ..., replayed: _Optional[bool] = ..., error: _Optional[_Union[ItemError, _Mapping]] = ...) -> None: ...

class SubmitEmailsRequest(_message.Message):
    __slots__ = ("email",)
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    email: SendEmailRequest
    def __init__(self, email: _Optional[_Union[SendEmailRequest, _Mapping]] = ...) -> None: ...

class SubmitEmailsResponse(_message.Message):
    __slots__ = ("index", "id", "status", "replayed", "error")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    index: int
    id: str
    status: _common_pb2.JobStatus
    replayed: bool
    error: ItemError
    def __init__(self, index: _Optional[int] = ..., id: _Optional[str] = ..., status: _Optional[_Union[_common_pb2.JobStatus, str]] = ..., replayed: _Optional[bool] = ..., error: _Optional[_Union[ItemError, _Mapping]] = ...) -> None: ...

class ItemError(_message.Message):
    __slots__ = ("code", "message", "details")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    details: _containers.RepeatedCompositeFieldContainer[_any_pb2.Any]
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ..., details: _Optional[_Iterable[_Union[_any_pb2.Any, _Mapping]]] = ...) -> None: ...

class SendEmailRequest(_message.Message):
    __slots__ = ("email", "priority", "idempotency_key", "ordering_key")
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    ORDERING_KEY_FIELD_NUMBER: _ClassVar[int]
    email: _common_pb2.EmailRequest
    priority: _common_pb2.Priority
    idempotency_key: str
    ordering_key: str
    def __init__(self, email: _Optional[_Union[_common_pb2.EmailRequest, _Mapping]] = ..., priority: _Optional[_Union[_common_pb2.Priority, str]] = ..., idempotency_key: _Optional[str] = ..., ordering_key: _Optional[str] = ...) -> None: ...

class SendEmailResponse(_message.Message):
    __slots__ = ("id", "status")
    ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    id: str
    status: _common_pb2.JobStatus
    def __init__(self, id: _Optional[str] = ..., status: _Optional[_Union[_common_pb2.JobStatus, str]] = ...) -> None: ...

class RetryJobRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class RetryJobResponse(_message.Message):
    __slots__ = ("id", "status")
    ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    id: str
    status: _common_pb2.JobStatus
    def __init__(self, id: _Optional[str] = ..., status: _Optional[_Union[_common_pb2.JobStatus, str]] = ...) -> None: ...

class SendWebhookRequest(_message.Message):
    __slots__ = ("url", "headers", "body", "content_type", "priority", "idempotency_key", "ordering_key")
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
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    ORDERING_KEY_FIELD_NUMBER: _ClassVar[int]
    url: str
    headers: _containers.ScalarMap[str, str]
    body: bytes
    content_type: str
    priority: _common_pb2.Priority
    idempotency_key: str
    ordering_key: str
    def __init__(self, url: _Optional[str] = ..., headers: _Optional[_Mapping[str, str]] = ..., body: _Optional[bytes] = ..., content_type: _Optional[str] = ..., priority: _Optional[_Union[_common_pb2.Priority, str]] = ..., idempotency_key: _Optional[str] = ..., ordering_key: _Optional[str] = ...) -> None: ...

class SendWebhookResponse(_message.Message):
    __slots__ = ("id", "status")
    ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    id: str
    status: _common_pb2.JobStatus
    def __init__(self, id: _Optional[str] = ..., status: _Optional[_Union[_common_pb2.JobStatus, str]] = ...) -> None: ...

class NotificationServiceGetJobRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class NotificationServiceGetJobResponse(_message.Message):
    __slots__ = ("job", "attempts")
    JOB_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    job: _common_pb2.Job
    attempts: _containers.RepeatedCompositeFieldContainer[_common_pb2.Attempt]
    def __init__(self, job: _Optional[_Union[_common_pb2.Job, _Mapping]] = ..., attempts: _Optional[_Iterable[_Union[_common_pb2.Attempt, _Mapping]]] = ...) -> None: ...

class NotificationServiceListJobsRequest(_message.Message):
    __slots__ = ("page_size", "cursor", "status", "channel", "created_after", "created_before", "event_id", "target_id")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    CREATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    cursor: str
    status: _common_pb2.JobStatus
    channel: _common_pb2.Channel
    created_after: _timestamp_pb2.Timestamp
    created_before: _timestamp_pb2.Timestamp
    event_id: str
    target_id: str
    def __init__(self, page_size: _Optional[int] = ..., cursor: _Optional[str] = ..., status: _Optional[_Union[_common_pb2.JobStatus, str]] = ..., channel: _Optional[_Union[_common_pb2.Channel, str]] = ..., created_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., event_id: _Optional[str] = ..., target_id: _Optional[str] = ...) -> None: ...

class NotificationServiceListJobsResponse(_message.Message):
    __slots__ = ("jobs", "next_cursor")
    JOBS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[_common_pb2.Job]
    next_cursor: str
    def __init__(self, jobs: _Optional[_Iterable[_Union[_common_pb2.Job, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class NotificationServicePublishEventRequest(_message.Message):
    __slots__ = ("event_type", "payload", "content_type", "event_id", "ordering_key")
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    ORDERING_KEY_FIELD_NUMBER: _ClassVar[int]
    event_type: str
    payload: bytes
    content_type: str
    event_id: str
    ordering_key: str
    def __init__(self, event_type: _Optional[str] = ..., payload: _Optional[bytes] = ..., content_type: _Optional[str] = ..., event_id: _Optional[str] = ..., ordering_key: _Optional[str] = ...) -> None: ...

class NotificationServicePublishEventResponse(_message.Message):
    __slots__ = ("event_id", "replayed", "deliveries")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    replayed: bool
    deliveries: _containers.RepeatedCompositeFieldContainer[_common_pb2.EventDelivery]
    def __init__(self, event_id: _Optional[str] = ..., replayed: _Optional[bool] = ..., deliveries: _Optional[_Iterable[_Union[_common_pb2.EventDelivery, _Mapping]]] = ...) -> None: ...

class NotificationServiceCreateWebhookTargetRequest(_message.Message):
    __slots__ = ("target", "signing_key")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    SIGNING_KEY_FIELD_NUMBER: _ClassVar[int]
    target: _common_pb2.WebhookTarget
    signing_key: str
    def __init__(self, target: _Optional[_Union[_common_pb2.WebhookTarget, _Mapping]] = ..., signing_key: _Optional[str] = ...) -> None: ...

class NotificationServiceCreateWebhookTargetResponse(_message.Message):
    __slots__ = ("target",)
    TARGET_FIELD_NUMBER: _ClassVar[int]
    target: _common_pb2.WebhookTarget
    def __init__(self, target: _Optional[_Union[_common_pb2.WebhookTarget, _Mapping]] = ...) -> None: ...

class NotificationServiceGetWebhookTargetRequest(_message.Message):
    __slots__ = ("target_id",)
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    def __init__(self, target_id: _Optional[str] = ...) -> None: ...

class NotificationServiceGetWebhookTargetResponse(_message.Message):
    __slots__ = ("target",)
    TARGET_FIELD_NUMBER: _ClassVar[int]
    target: _common_pb2.WebhookTarget
    def __init__(self, target: _Optional[_Union[_common_pb2.WebhookTarget, _Mapping]] = ...) -> None: ...

class NotificationServiceListWebhookTargetsRequest(_message.Message):
    __slots__ = ("page_size", "cursor")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    cursor: str
    def __init__(self, page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class NotificationServiceListWebhookTargetsResponse(_message.Message):
    __slots__ = ("targets", "next_cursor")
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    targets: _containers.RepeatedCompositeFieldContainer[_common_pb2.WebhookTarget]
    next_cursor: str
    def __init__(self, targets: _Optional[_Iterable[_Union[_common_pb2.WebhookTarget, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class NotificationServiceUpdateWebhookTargetRequest(_message.Message):
    __slots__ = ("target_id", "url", "description", "replace_headers", "headers", "rate_limit_per_min", "enabled", "disabled_reason", "max_in_flight")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    REPLACE_HEADERS_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMIT_PER_MIN_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    DISABLED_REASON_FIELD_NUMBER: _ClassVar[int]
    MAX_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    url: str
    description: str
    replace_headers: bool
    headers: _containers.ScalarMap[str, str]
    rate_limit_per_min: int
    enabled: bool
    disabled_reason: str
    max_in_flight: int
    def __init__(self, target_id: _Optional[str] = ..., url: _Optional[str] = ..., description: _Optional[str] = ..., replace_headers: _Optional[bool] = ..., headers: _Optional[_Mapping[str, str]] = ..., rate_limit_per_min: _Optional[int] = ..., enabled: _Optional[bool] = ..., disabled_reason: _Optional[str] = ..., max_in_flight: _Optional[int] = ...) -> None: ...

class NotificationServiceUpdateWebhookTargetResponse(_message.Message):
    __slots__ = ("target",)
    TARGET_FIELD_NUMBER: _ClassVar[int]
    target: _common_pb2.WebhookTarget
    def __init__(self, target: _Optional[_Union[_common_pb2.WebhookTarget, _Mapping]] = ...) -> None: ...

class NotificationServiceDeleteWebhookTargetRequest(_message.Message):
    __slots__ = ("target_id",)
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    def __init__(self, target_id: _Optional[str] = ...) -> None: ...

class NotificationServiceDeleteWebhookTargetResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class NotificationServiceCreateEventFilterRequest(_message.Message):
    __slots__ = ("filter",)
    FILTER_FIELD_NUMBER: _ClassVar[int]
    filter: _common_pb2.EventFilter
    def __init__(self, filter: _Optional[_Union[_common_pb2.EventFilter, _Mapping]] = ...) -> None: ...

class NotificationServiceCreateEventFilterResponse(_message.Message):
    __slots__ = ("filter",)
    FILTER_FIELD_NUMBER: _ClassVar[int]
    filter: _common_pb2.EventFilter
    def __init__(self, filter: _Optional[_Union[_common_pb2.EventFilter, _Mapping]] = ...) -> None: ...

class NotificationServiceGetEventFilterRequest(_message.Message):
    __slots__ = ("filter_id",)
    FILTER_ID_FIELD_NUMBER: _ClassVar[int]
    filter_id: str
    def __init__(self, filter_id: _Optional[str] = ...) -> None: ...

class NotificationServiceGetEventFilterResponse(_message.Message):
    __slots__ = ("filter",)
    FILTER_FIELD_NUMBER: _ClassVar[int]
    filter: _common_pb2.EventFilter
    def __init__(self, filter: _Optional[_Union[_common_pb2.EventFilter, _Mapping]] = ...) -> None: ...

class NotificationServiceListEventFiltersRequest(_message.Message):
    __slots__ = ("page_size", "cursor")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    cursor: str
    def __init__(self, page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class NotificationServiceListEventFiltersResponse(_message.Message):
    __slots__ = ("filters", "next_cursor")
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    filters: _containers.RepeatedCompositeFieldContainer[_common_pb2.EventFilter]
    next_cursor: str
    def __init__(self, filters: _Optional[_Iterable[_Union[_common_pb2.EventFilter, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class NotificationServiceUpdateEventFilterRequest(_message.Message):
    __slots__ = ("filter_id", "description", "replace_event_types", "event_types")
    FILTER_ID_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    REPLACE_EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    filter_id: str
    description: str
    replace_event_types: bool
    event_types: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, filter_id: _Optional[str] = ..., description: _Optional[str] = ..., replace_event_types: _Optional[bool] = ..., event_types: _Optional[_Iterable[str]] = ...) -> None: ...

class NotificationServiceUpdateEventFilterResponse(_message.Message):
    __slots__ = ("filter",)
    FILTER_FIELD_NUMBER: _ClassVar[int]
    filter: _common_pb2.EventFilter
    def __init__(self, filter: _Optional[_Union[_common_pb2.EventFilter, _Mapping]] = ...) -> None: ...

class NotificationServiceDeleteEventFilterRequest(_message.Message):
    __slots__ = ("filter_id",)
    FILTER_ID_FIELD_NUMBER: _ClassVar[int]
    filter_id: str
    def __init__(self, filter_id: _Optional[str] = ...) -> None: ...

class NotificationServiceDeleteEventFilterResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class NotificationServiceCreateSubscriptionRequest(_message.Message):
    __slots__ = ("subscription",)
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    subscription: _common_pb2.Subscription
    def __init__(self, subscription: _Optional[_Union[_common_pb2.Subscription, _Mapping]] = ...) -> None: ...

class NotificationServiceCreateSubscriptionResponse(_message.Message):
    __slots__ = ("subscription",)
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    subscription: _common_pb2.Subscription
    def __init__(self, subscription: _Optional[_Union[_common_pb2.Subscription, _Mapping]] = ...) -> None: ...

class NotificationServiceGetSubscriptionRequest(_message.Message):
    __slots__ = ("subscription_id",)
    SUBSCRIPTION_ID_FIELD_NUMBER: _ClassVar[int]
    subscription_id: str
    def __init__(self, subscription_id: _Optional[str] = ...) -> None: ...

class NotificationServiceGetSubscriptionResponse(_message.Message):
    __slots__ = ("subscription",)
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    subscription: _common_pb2.Subscription
    def __init__(self, subscription: _Optional[_Union[_common_pb2.Subscription, _Mapping]] = ...) -> None: ...

class NotificationServiceListSubscriptionsRequest(_message.Message):
    __slots__ = ("page_size", "cursor")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    cursor: str
    def __init__(self, page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class NotificationServiceListSubscriptionsResponse(_message.Message):
    __slots__ = ("subscriptions", "next_cursor")
    SUBSCRIPTIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    subscriptions: _containers.RepeatedCompositeFieldContainer[_common_pb2.Subscription]
    next_cursor: str
    def __init__(self, subscriptions: _Optional[_Iterable[_Union[_common_pb2.Subscription, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class NotificationServiceUpdateSubscriptionRequest(_message.Message):
    __slots__ = ("subscription_id", "target_id", "filter_id", "active")
    SUBSCRIPTION_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    FILTER_ID_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    subscription_id: str
    target_id: str
    filter_id: str
    active: bool
    def __init__(self, subscription_id: _Optional[str] = ..., target_id: _Optional[str] = ..., filter_id: _Optional[str] = ..., active: _Optional[bool] = ...) -> None: ...

class NotificationServiceUpdateSubscriptionResponse(_message.Message):
    __slots__ = ("subscription",)
    SUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    subscription: _common_pb2.Subscription
    def __init__(self, subscription: _Optional[_Union[_common_pb2.Subscription, _Mapping]] = ...) -> None: ...

class NotificationServiceDeleteSubscriptionRequest(_message.Message):
    __slots__ = ("subscription_id",)
    SUBSCRIPTION_ID_FIELD_NUMBER: _ClassVar[int]
    subscription_id: str
    def __init__(self, subscription_id: _Optional[str] = ...) -> None: ...

class NotificationServiceDeleteSubscriptionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class AdminServiceEraseTenantRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class AdminServiceEraseTenantResponse(_message.Message):
    __slots__ = ("receipt",)
    RECEIPT_FIELD_NUMBER: _ClassVar[int]
    receipt: _common_pb2.ErasureReceipt
    def __init__(self, receipt: _Optional[_Union[_common_pb2.ErasureReceipt, _Mapping]] = ...) -> None: ...

class AdminServiceListAuditLogRequest(_message.Message):
    __slots__ = ("tenant_id", "page_size", "cursor")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    page_size: int
    cursor: str
    def __init__(self, tenant_id: _Optional[str] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class AdminServiceListAuditLogResponse(_message.Message):
    __slots__ = ("entries", "next_cursor")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[_common_pb2.AuditEntry]
    next_cursor: str
    def __init__(self, entries: _Optional[_Iterable[_Union[_common_pb2.AuditEntry, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class AdminServiceCreateOperatorRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class AdminServiceCreateOperatorResponse(_message.Message):
    __slots__ = ("operator", "token")
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    operator: _common_pb2.Operator
    token: str
    def __init__(self, operator: _Optional[_Union[_common_pb2.Operator, _Mapping]] = ..., token: _Optional[str] = ...) -> None: ...

class AdminServiceListOperatorsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class AdminServiceListOperatorsResponse(_message.Message):
    __slots__ = ("operators",)
    OPERATORS_FIELD_NUMBER: _ClassVar[int]
    operators: _containers.RepeatedCompositeFieldContainer[_common_pb2.Operator]
    def __init__(self, operators: _Optional[_Iterable[_Union[_common_pb2.Operator, _Mapping]]] = ...) -> None: ...

class AdminServiceRevokeOperatorRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class AdminServiceRevokeOperatorResponse(_message.Message):
    __slots__ = ("operator",)
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    operator: _common_pb2.Operator
    def __init__(self, operator: _Optional[_Union[_common_pb2.Operator, _Mapping]] = ...) -> None: ...

class AdminServiceListDeadLettersRequest(_message.Message):
    __slots__ = ("since", "tenant_id", "include_retried", "page_size", "cursor")
    SINCE_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_RETRIED_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    since: _timestamp_pb2.Timestamp
    tenant_id: str
    include_retried: bool
    page_size: int
    cursor: str
    def __init__(self, since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., tenant_id: _Optional[str] = ..., include_retried: _Optional[bool] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class AdminServiceListDeadLettersResponse(_message.Message):
    __slots__ = ("entries", "next_cursor")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[_common_pb2.DeadLetter]
    next_cursor: str
    def __init__(self, entries: _Optional[_Iterable[_Union[_common_pb2.DeadLetter, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class AdminServiceGetDeadLetterRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class AdminServiceGetDeadLetterResponse(_message.Message):
    __slots__ = ("entry", "job")
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    entry: _common_pb2.DeadLetter
    job: _common_pb2.Job
    def __init__(self, entry: _Optional[_Union[_common_pb2.DeadLetter, _Mapping]] = ..., job: _Optional[_Union[_common_pb2.Job, _Mapping]] = ...) -> None: ...

class RetryDeadLettersRequest(_message.Message):
    __slots__ = ("job_ids", "all", "since")
    JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    ALL_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    job_ids: _containers.RepeatedScalarFieldContainer[str]
    all: bool
    since: _timestamp_pb2.Timestamp
    def __init__(self, job_ids: _Optional[_Iterable[str]] = ..., all: _Optional[bool] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RetryDeadLettersResponse(_message.Message):
    __slots__ = ("outcomes",)
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    outcomes: _containers.RepeatedCompositeFieldContainer[_ledger_jobs_pb2.RetryOutcome]
    def __init__(self, outcomes: _Optional[_Iterable[_Union[_ledger_jobs_pb2.RetryOutcome, _Mapping]]] = ...) -> None: ...

class AdminServiceCreateTenantRequest(_message.Message):
    __slots__ = ("name", "plan", "contact_email", "allow_duplicate_name")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    CONTACT_EMAIL_FIELD_NUMBER: _ClassVar[int]
    ALLOW_DUPLICATE_NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    plan: _common_pb2.Plan
    contact_email: str
    allow_duplicate_name: bool
    def __init__(self, name: _Optional[str] = ..., plan: _Optional[_Union[_common_pb2.Plan, str]] = ..., contact_email: _Optional[str] = ..., allow_duplicate_name: _Optional[bool] = ...) -> None: ...

class AdminServiceCreateTenantResponse(_message.Message):
    __slots__ = ("tenant", "api_key")
    TENANT_FIELD_NUMBER: _ClassVar[int]
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    tenant: _common_pb2.Tenant
    api_key: str
    def __init__(self, tenant: _Optional[_Union[_common_pb2.Tenant, _Mapping]] = ..., api_key: _Optional[str] = ...) -> None: ...

class AdminServiceListTenantsRequest(_message.Message):
    __slots__ = ("page_size", "cursor")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    cursor: str
    def __init__(self, page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class AdminServiceListTenantsResponse(_message.Message):
    __slots__ = ("tenants", "next_cursor")
    TENANTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    tenants: _containers.RepeatedCompositeFieldContainer[_common_pb2.Tenant]
    next_cursor: str
    def __init__(self, tenants: _Optional[_Iterable[_Union[_common_pb2.Tenant, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class AdminServiceGetTenantRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class AdminServiceGetTenantResponse(_message.Message):
    __slots__ = ("tenant",)
    TENANT_FIELD_NUMBER: _ClassVar[int]
    tenant: _common_pb2.Tenant
    def __init__(self, tenant: _Optional[_Union[_common_pb2.Tenant, _Mapping]] = ...) -> None: ...

class AdminServiceUpdateTenantRequest(_message.Message):
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

class AdminServiceUpdateTenantResponse(_message.Message):
    __slots__ = ("tenant",)
    TENANT_FIELD_NUMBER: _ClassVar[int]
    tenant: _common_pb2.Tenant
    def __init__(self, tenant: _Optional[_Union[_common_pb2.Tenant, _Mapping]] = ...) -> None: ...

class AdminServiceCreateApiKeyRequest(_message.Message):
    __slots__ = ("tenant_id", "name", "scopes")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    name: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tenant_id: _Optional[str] = ..., name: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ...) -> None: ...

class AdminServiceCreateApiKeyResponse(_message.Message):
    __slots__ = ("key", "api_key")
    KEY_FIELD_NUMBER: _ClassVar[int]
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    key: _common_pb2.ApiKey
    api_key: str
    def __init__(self, key: _Optional[_Union[_common_pb2.ApiKey, _Mapping]] = ..., api_key: _Optional[str] = ...) -> None: ...

class AdminServiceListApiKeysRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class AdminServiceListApiKeysResponse(_message.Message):
    __slots__ = ("keys",)
    KEYS_FIELD_NUMBER: _ClassVar[int]
    keys: _containers.RepeatedCompositeFieldContainer[_common_pb2.ApiKey]
    def __init__(self, keys: _Optional[_Iterable[_Union[_common_pb2.ApiKey, _Mapping]]] = ...) -> None: ...

class AdminServiceRevokeApiKeyRequest(_message.Message):
    __slots__ = ("tenant_id", "key_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    key_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., key_id: _Optional[str] = ...) -> None: ...

class AdminServiceRevokeApiKeyResponse(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: _common_pb2.ApiKey
    def __init__(self, key: _Optional[_Union[_common_pb2.ApiKey, _Mapping]] = ...) -> None: ...

class RotateMasterKeyRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RotateMasterKeyResponse(_message.Message):
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

class AdminServiceSetTenantLimitsRequest(_message.Message):
    __slots__ = ("tenant_id", "payload_retention_days", "row_retention_days", "rate_per_min", "webhooks_per_month", "emails_per_month")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_RETENTION_DAYS_FIELD_NUMBER: _ClassVar[int]
    ROW_RETENTION_DAYS_FIELD_NUMBER: _ClassVar[int]
    RATE_PER_MIN_FIELD_NUMBER: _ClassVar[int]
    WEBHOOKS_PER_MONTH_FIELD_NUMBER: _ClassVar[int]
    EMAILS_PER_MONTH_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    payload_retention_days: int
    row_retention_days: int
    rate_per_min: int
    webhooks_per_month: int
    emails_per_month: int
    def __init__(self, tenant_id: _Optional[str] = ..., payload_retention_days: _Optional[int] = ..., row_retention_days: _Optional[int] = ..., rate_per_min: _Optional[int] = ..., webhooks_per_month: _Optional[int] = ..., emails_per_month: _Optional[int] = ...) -> None: ...

class AdminServiceSetTenantLimitsResponse(_message.Message):
    __slots__ = ("tenant",)
    TENANT_FIELD_NUMBER: _ClassVar[int]
    tenant: _common_pb2.Tenant
    def __init__(self, tenant: _Optional[_Union[_common_pb2.Tenant, _Mapping]] = ...) -> None: ...

class GetTenantUsageRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class GetTenantUsageResponse(_message.Message):
    __slots__ = ("usage",)
    USAGE_FIELD_NUMBER: _ClassVar[int]
    usage: _common_pb2.Usage
    def __init__(self, usage: _Optional[_Union[_common_pb2.Usage, _Mapping]] = ...) -> None: ...

class NotificationServiceCreateDomainRequest(_message.Message):
    __slots__ = ("domain", "provider_id")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    domain: str
    provider_id: str
    def __init__(self, domain: _Optional[str] = ..., provider_id: _Optional[str] = ...) -> None: ...

class NotificationServiceCreateDomainResponse(_message.Message):
    __slots__ = ("domain",)
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    domain: _common_pb2.SendingDomain
    def __init__(self, domain: _Optional[_Union[_common_pb2.SendingDomain, _Mapping]] = ...) -> None: ...

class NotificationServiceVerifyDomainRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class NotificationServiceVerifyDomainResponse(_message.Message):
    __slots__ = ("domain",)
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    domain: _common_pb2.SendingDomain
    def __init__(self, domain: _Optional[_Union[_common_pb2.SendingDomain, _Mapping]] = ...) -> None: ...

class NotificationServiceGetDomainRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class NotificationServiceGetDomainResponse(_message.Message):
    __slots__ = ("domain",)
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    domain: _common_pb2.SendingDomain
    def __init__(self, domain: _Optional[_Union[_common_pb2.SendingDomain, _Mapping]] = ...) -> None: ...

class NotificationServiceListDomainsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class NotificationServiceListDomainsResponse(_message.Message):
    __slots__ = ("domains",)
    DOMAINS_FIELD_NUMBER: _ClassVar[int]
    domains: _containers.RepeatedCompositeFieldContainer[_common_pb2.SendingDomain]
    def __init__(self, domains: _Optional[_Iterable[_Union[_common_pb2.SendingDomain, _Mapping]]] = ...) -> None: ...

class AdminServiceListPlatformEmailsRequest(_message.Message):
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

class AdminServiceListPlatformEmailsResponse(_message.Message):
    __slots__ = ("entries", "next_cursor")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[_common_pb2.PlatformEmail]
    next_cursor: str
    def __init__(self, entries: _Optional[_Iterable[_Union[_common_pb2.PlatformEmail, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class NotificationServiceListEventsRequest(_message.Message):
    __slots__ = ("page_size", "cursor", "event_type", "since", "until")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    cursor: str
    event_type: str
    since: _timestamp_pb2.Timestamp
    until: _timestamp_pb2.Timestamp
    def __init__(self, page_size: _Optional[int] = ..., cursor: _Optional[str] = ..., event_type: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., until: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class NotificationServiceListEventsResponse(_message.Message):
    __slots__ = ("events", "next_cursor")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_common_pb2.Event]
    next_cursor: str
    def __init__(self, events: _Optional[_Iterable[_Union[_common_pb2.Event, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class NotificationServiceGetEventRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class NotificationServiceGetEventResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _common_pb2.Event
    def __init__(self, event: _Optional[_Union[_common_pb2.Event, _Mapping]] = ...) -> None: ...

class NotificationServiceResendJobRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class NotificationServiceResendJobResponse(_message.Message):
    __slots__ = ("job",)
    JOB_FIELD_NUMBER: _ClassVar[int]
    job: _common_pb2.Job
    def __init__(self, job: _Optional[_Union[_common_pb2.Job, _Mapping]] = ...) -> None: ...

class NotificationServiceReplayEventRequest(_message.Message):
    __slots__ = ("id", "target_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    target_id: str
    def __init__(self, id: _Optional[str] = ..., target_id: _Optional[str] = ...) -> None: ...

class NotificationServiceReplayEventResponse(_message.Message):
    __slots__ = ("event_id", "deliveries")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    deliveries: _containers.RepeatedCompositeFieldContainer[_common_pb2.EventDelivery]
    def __init__(self, event_id: _Optional[str] = ..., deliveries: _Optional[_Iterable[_Union[_common_pb2.EventDelivery, _Mapping]]] = ...) -> None: ...

class PublishEventsRequest(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: NotificationServicePublishEventRequest
    def __init__(self, event: _Optional[_Union[NotificationServicePublishEventRequest, _Mapping]] = ...) -> None: ...

class PublishEventsResponse(_message.Message):
    __slots__ = ("index", "event_id", "replayed", "deliveries", "error")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    index: int
    event_id: str
    replayed: bool
    deliveries: _containers.RepeatedCompositeFieldContainer[_common_pb2.EventDelivery]
    error: ItemError
    def __init__(self, index: _Optional[int] = ..., event_id: _Optional[str] = ..., replayed: _Optional[bool] = ..., deliveries: _Optional[_Iterable[_Union[_common_pb2.EventDelivery, _Mapping]]] = ..., error: _Optional[_Union[ItemError, _Mapping]] = ...) -> None: ...

class NotificationServiceExpungeJobPayloadRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class NotificationServiceExpungeJobPayloadResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class NotificationServiceExpungeEventPayloadRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class NotificationServiceExpungeEventPayloadResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
