from herald.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Rejection(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REJECTION_UNSPECIFIED: _ClassVar[Rejection]
    REJECTION_QUOTA_EXCEEDED: _ClassVar[Rejection]
    REJECTION_SENDER_DOMAIN_UNVERIFIED: _ClassVar[Rejection]
    REJECTION_IDEMPOTENCY_MISMATCH: _ClassVar[Rejection]
    REJECTION_IDEMPOTENCY_IN_FLIGHT: _ClassVar[Rejection]
    REJECTION_TENANT_DISABLED: _ClassVar[Rejection]
    REJECTION_UNSTORABLE: _ClassVar[Rejection]
REJECTION_UNSPECIFIED: Rejection
REJECTION_QUOTA_EXCEEDED: Rejection
REJECTION_SENDER_DOMAIN_UNVERIFIED: Rejection
REJECTION_IDEMPOTENCY_MISMATCH: Rejection
REJECTION_IDEMPOTENCY_IN_FLIGHT: Rejection
REJECTION_TENANT_DISABLED: Rejection
REJECTION_UNSTORABLE: Rejection

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
