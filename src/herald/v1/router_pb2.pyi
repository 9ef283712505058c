import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from herald.v1 import common_pb2 as _common_pb2
from herald.v1 import ledger_pb2 as _ledger_pb2
from herald.v1 import ledger_jobs_pb2 as _ledger_jobs_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Submission(_message.Message):
    __slots__ = ("tenant_id", "plan", "channel", "requested_priority", "idempotency_key", "webhook", "email", "ordering_key", "request_hash")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_PRIORITY_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    ORDERING_KEY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_HASH_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    plan: _common_pb2.Plan
    channel: _common_pb2.Channel
    requested_priority: _common_pb2.Priority
    idempotency_key: str
    webhook: _common_pb2.WebhookRequest
    email: _common_pb2.EmailRequest
    ordering_key: str
    request_hash: bytes
    def __init__(self, tenant_id: _Optional[str] = ..., plan: _Optional[_Union[_common_pb2.Plan, str]] = ..., channel: _Optional[_Union[_common_pb2.Channel, str]] = ..., requested_priority: _Optional[_Union[_common_pb2.Priority, str]] = ..., idempotency_key: _Optional[str] = ..., webhook: _Optional[_Union[_common_pb2.WebhookRequest, _Mapping]] = ..., email: _Optional[_Union[_common_pb2.EmailRequest, _Mapping]] = ..., ordering_key: _Optional[str] = ..., request_hash: _Optional[bytes] = ...) -> None: ...

class SubmitJobsRequest(_message.Message):
    __slots__ = ("submissions",)
    SUBMISSIONS_FIELD_NUMBER: _ClassVar[int]
    submissions: _containers.RepeatedCompositeFieldContainer[Submission]
    def __init__(self, submissions: _Optional[_Iterable[_Union[Submission, _Mapping]]] = ...) -> None: ...

class SubmitJobsResponse(_message.Message):
    __slots__ = ("outcomes",)
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    outcomes: _containers.RepeatedCompositeFieldContainer[_ledger_jobs_pb2.DraftOutcome]
    def __init__(self, outcomes: _Optional[_Iterable[_Union[_ledger_jobs_pb2.DraftOutcome, _Mapping]]] = ...) -> None: ...

class RouterServiceRetryJobsRequest(_message.Message):
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

class RouterServiceRetryJobsResponse(_message.Message):
    __slots__ = ("outcomes",)
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    outcomes: _containers.RepeatedCompositeFieldContainer[_ledger_jobs_pb2.RetryOutcome]
    def __init__(self, outcomes: _Optional[_Iterable[_Union[_ledger_jobs_pb2.RetryOutcome, _Mapping]]] = ...) -> None: ...

class PublishEventRequest(_message.Message):
    __slots__ = ("tenant_id", "plan", "event_type", "event_id", "payload", "content_type", "ordering_key")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    ORDERING_KEY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    plan: _common_pb2.Plan
    event_type: str
    event_id: str
    payload: bytes
    content_type: str
    ordering_key: str
    def __init__(self, tenant_id: _Optional[str] = ..., plan: _Optional[_Union[_common_pb2.Plan, str]] = ..., event_type: _Optional[str] = ..., event_id: _Optional[str] = ..., payload: _Optional[bytes] = ..., content_type: _Optional[str] = ..., ordering_key: _Optional[str] = ...) -> None: ...

class PublishEventResponse(_message.Message):
    __slots__ = ("event_id", "replayed", "deliveries", "rejection", "detail")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    REJECTION_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    replayed: bool
    deliveries: _containers.RepeatedCompositeFieldContainer[_common_pb2.EventDelivery]
    rejection: _ledger_pb2.Rejection
    detail: str
    def __init__(self, event_id: _Optional[str] = ..., replayed: _Optional[bool] = ..., deliveries: _Optional[_Iterable[_Union[_common_pb2.EventDelivery, _Mapping]]] = ..., rejection: _Optional[_Union[_ledger_pb2.Rejection, str]] = ..., detail: _Optional[str] = ...) -> None: ...

class ReplayEventRequest(_message.Message):
    __slots__ = ("tenant_id", "plan", "event_id", "target_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    plan: _common_pb2.Plan
    event_id: str
    target_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., plan: _Optional[_Union[_common_pb2.Plan, str]] = ..., event_id: _Optional[str] = ..., target_id: _Optional[str] = ...) -> None: ...

class ReplayEventResponse(_message.Message):
    __slots__ = ("event_id", "deliveries", "rejection", "detail")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    REJECTION_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    deliveries: _containers.RepeatedCompositeFieldContainer[_common_pb2.EventDelivery]
    rejection: _ledger_pb2.Rejection
    detail: str
    def __init__(self, event_id: _Optional[str] = ..., deliveries: _Optional[_Iterable[_Union[_common_pb2.EventDelivery, _Mapping]]] = ..., rejection: _Optional[_Union[_ledger_pb2.Rejection, str]] = ..., detail: _Optional[str] = ...) -> None: ...
