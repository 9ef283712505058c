import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from herald.v1 import common_pb2 as _common_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PingTargetRequest(_message.Message):
    __slots__ = ("tenant_id", "target_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    target_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., target_id: _Optional[str] = ...) -> None: ...

class PingTargetResponse(_message.Message):
    __slots__ = ("ping",)
    PING_FIELD_NUMBER: _ClassVar[int]
    ping: _common_pb2.TargetPing
    def __init__(self, ping: _Optional[_Union[_common_pb2.TargetPing, _Mapping]] = ...) -> None: ...

class WebhookDelivery(_message.Message):
    __slots__ = ("job_id", "tenant_id", "priority", "request", "ordering_key", "target_id", "payload_object", "run", "run_started_at")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    ORDERING_KEY_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_OBJECT_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    RUN_STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    tenant_id: str
    priority: _common_pb2.Priority
    request: _common_pb2.WebhookRequest
    ordering_key: str
    target_id: str
    payload_object: str
    run: int
    run_started_at: _timestamp_pb2.Timestamp
    def __init__(self, job_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., priority: _Optional[_Union[_common_pb2.Priority, str]] = ..., request: _Optional[_Union[_common_pb2.WebhookRequest, _Mapping]] = ..., ordering_key: _Optional[str] = ..., target_id: _Optional[str] = ..., payload_object: _Optional[str] = ..., run: _Optional[int] = ..., run_started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetWorkerStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetWorkerStatusResponse(_message.Message):
    __slots__ = ("concurrency", "in_flight", "delivered_total", "failed_total")
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    DELIVERED_TOTAL_FIELD_NUMBER: _ClassVar[int]
    FAILED_TOTAL_FIELD_NUMBER: _ClassVar[int]
    concurrency: int
    in_flight: int
    delivered_total: int
    failed_total: int
    def __init__(self, concurrency: _Optional[int] = ..., in_flight: _Optional[int] = ..., delivered_total: _Optional[int] = ..., failed_total: _Optional[int] = ...) -> None: ...
