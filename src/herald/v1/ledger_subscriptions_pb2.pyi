import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from herald.v1 import common_pb2 as _common_pb2
from herald.v1 import ledger_pb2 as _ledger_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateWebhookTargetRequest(_message.Message):
    __slots__ = ("target", "signing_key")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    SIGNING_KEY_FIELD_NUMBER: _ClassVar[int]
    target: _common_pb2.WebhookTarget
    signing_key: str
    def __init__(self, target: _Optional[_Union[_common_pb2.WebhookTarget, _Mapping]] = ..., signing_key: _Optional[str] = ...) -> None: ...

class CreateWebhookTargetResponse(_message.Message):
    __slots__ = ("target",)
    TARGET_FIELD_NUMBER: _ClassVar[int]
    target: _common_pb2.WebhookTarget
    def __init__(self, target: _Optional[_Union[_common_pb2.WebhookTarget, _Mapping]] = ...) -> None: ...

class GetWebhookTargetRequest(_message.Message):
    __slots__ = ("tenant_id", "target_id", "with_breaker")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    WITH_BREAKER_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    target_id: str
    with_breaker: bool
    def __init__(self, tenant_id: _Optional[str] = ..., target_id: _Optional[str] = ..., with_breaker: _Optional[bool] = ...) -> None: ...

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
    __slots__ = ("tenant_id", "target_id", "url", "description", "replace_headers", "headers", "rate_limit_per_min", "enabled", "disabled_reason", "max_in_flight")
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
    MAX_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    target_id: str
    url: str
    description: str
    replace_headers: bool
    headers: _containers.ScalarMap[str, str]
    rate_limit_per_min: int
    enabled: bool
    disabled_reason: str
    max_in_flight: int
    def __init__(self, tenant_id: _Optional[str] = ..., target_id: _Optional[str] = ..., url: _Optional[str] = ..., description: _Optional[str] = ..., replace_headers: _Optional[bool] = ..., headers: _Optional[_Mapping[str, str]] = ..., rate_limit_per_min: _Optional[int] = ..., enabled: _Optional[bool] = ..., disabled_reason: _Optional[str] = ..., max_in_flight: _Optional[int] = ...) -> None: ...

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
    __slots__ = ("tenant_id", "target_id", "since", "limit", "until")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    target_id: str
    since: _timestamp_pb2.Timestamp
    limit: int
    until: _timestamp_pb2.Timestamp
    def __init__(self, tenant_id: _Optional[str] = ..., target_id: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., limit: _Optional[int] = ..., until: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

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
    __slots__ = ("subscription_id", "target", "event_types", "active")
    SUBSCRIPTION_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    subscription_id: str
    target: _common_pb2.WebhookTarget
    event_types: _containers.RepeatedScalarFieldContainer[str]
    active: bool
    def __init__(self, subscription_id: _Optional[str] = ..., target: _Optional[_Union[_common_pb2.WebhookTarget, _Mapping]] = ..., event_types: _Optional[_Iterable[str]] = ..., active: _Optional[bool] = ...) -> None: ...

class ListActiveSubscriptionsResponse(_message.Message):
    __slots__ = ("subscriptions",)
    SUBSCRIPTIONS_FIELD_NUMBER: _ClassVar[int]
    subscriptions: _containers.RepeatedCompositeFieldContainer[ActiveSubscription]
    def __init__(self, subscriptions: _Optional[_Iterable[_Union[ActiveSubscription, _Mapping]]] = ...) -> None: ...

class RecordEventRequest(_message.Message):
    __slots__ = ("tenant_id", "event_id", "event_type", "drafts", "target_ids", "payload", "content_type", "skip_reasons", "replay", "ordering_key", "operational")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    DRAFTS_FIELD_NUMBER: _ClassVar[int]
    TARGET_IDS_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    SKIP_REASONS_FIELD_NUMBER: _ClassVar[int]
    REPLAY_FIELD_NUMBER: _ClassVar[int]
    ORDERING_KEY_FIELD_NUMBER: _ClassVar[int]
    OPERATIONAL_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    event_id: str
    event_type: str
    drafts: _containers.RepeatedCompositeFieldContainer[_ledger_pb2.JobDraft]
    target_ids: _containers.RepeatedScalarFieldContainer[str]
    payload: bytes
    content_type: str
    skip_reasons: _containers.RepeatedScalarFieldContainer[str]
    replay: bool
    ordering_key: str
    operational: bool
    def __init__(self, tenant_id: _Optional[str] = ..., event_id: _Optional[str] = ..., event_type: _Optional[str] = ..., drafts: _Optional[_Iterable[_Union[_ledger_pb2.JobDraft, _Mapping]]] = ..., target_ids: _Optional[_Iterable[str]] = ..., payload: _Optional[bytes] = ..., content_type: _Optional[str] = ..., skip_reasons: _Optional[_Iterable[str]] = ..., replay: _Optional[bool] = ..., ordering_key: _Optional[str] = ..., operational: _Optional[bool] = ...) -> None: ...

class RecordEventResponse(_message.Message):
    __slots__ = ("replayed", "deliveries", "rejection", "detail")
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    REJECTION_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    replayed: bool
    deliveries: _containers.RepeatedCompositeFieldContainer[_common_pb2.EventDelivery]
    rejection: _ledger_pb2.Rejection
    detail: str
    def __init__(self, replayed: _Optional[bool] = ..., deliveries: _Optional[_Iterable[_Union[_common_pb2.EventDelivery, _Mapping]]] = ..., rejection: _Optional[_Union[_ledger_pb2.Rejection, str]] = ..., detail: _Optional[str] = ...) -> None: ...

class ListEventsRequest(_message.Message):
    __slots__ = ("tenant_id", "page_size", "cursor", "event_type", "since", "until")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    page_size: int
    cursor: str
    event_type: str
    since: _timestamp_pb2.Timestamp
    until: _timestamp_pb2.Timestamp
    def __init__(self, tenant_id: _Optional[str] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ..., event_type: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., until: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListEventsResponse(_message.Message):
    __slots__ = ("events", "next_cursor")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_common_pb2.Event]
    next_cursor: str
    def __init__(self, events: _Optional[_Iterable[_Union[_common_pb2.Event, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class GetEventRequest(_message.Message):
    __slots__ = ("tenant_id", "event_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    event_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., event_id: _Optional[str] = ...) -> None: ...

class GetEventResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _common_pb2.Event
    def __init__(self, event: _Optional[_Union[_common_pb2.Event, _Mapping]] = ...) -> None: ...

class ExpungeEventPayloadRequest(_message.Message):
    __slots__ = ("tenant_id", "event_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    event_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., event_id: _Optional[str] = ...) -> None: ...

class ExpungeEventPayloadResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
