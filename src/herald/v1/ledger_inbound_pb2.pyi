import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

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
    __slots__ = ("provider", "tenant_id", "event_id", "type", "provider_message_id", "recipient", "occurred_at", "plan", "raw", "plan_ends_at")
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    RECIPIENT_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    RAW_FIELD_NUMBER: _ClassVar[int]
    PLAN_ENDS_AT_FIELD_NUMBER: _ClassVar[int]
    provider: str
    tenant_id: str
    event_id: str
    type: str
    provider_message_id: str
    recipient: str
    occurred_at: _timestamp_pb2.Timestamp
    plan: str
    raw: bytes
    plan_ends_at: _timestamp_pb2.Timestamp
    def __init__(self, provider: _Optional[str] = ..., tenant_id: _Optional[str] = ..., event_id: _Optional[str] = ..., type: _Optional[str] = ..., provider_message_id: _Optional[str] = ..., recipient: _Optional[str] = ..., occurred_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., plan: _Optional[str] = ..., raw: _Optional[bytes] = ..., plan_ends_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

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
