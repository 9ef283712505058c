import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from herald.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EraseTenantRequest(_message.Message):
    __slots__ = ("tenant_id", "erased_by")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    ERASED_BY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    erased_by: _common_pb2.AuditEntry
    def __init__(self, tenant_id: _Optional[str] = ..., erased_by: _Optional[_Union[_common_pb2.AuditEntry, _Mapping]] = ...) -> None: ...

class EraseTenantResponse(_message.Message):
    __slots__ = ("receipt",)
    RECEIPT_FIELD_NUMBER: _ClassVar[int]
    receipt: _common_pb2.ErasureReceipt
    def __init__(self, receipt: _Optional[_Union[_common_pb2.ErasureReceipt, _Mapping]] = ...) -> None: ...

class AppendAuditEntryRequest(_message.Message):
    __slots__ = ("entry",)
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    entry: _common_pb2.AuditEntry
    def __init__(self, entry: _Optional[_Union[_common_pb2.AuditEntry, _Mapping]] = ...) -> None: ...

class AppendAuditEntryResponse(_message.Message):
    __slots__ = ("entry",)
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    entry: _common_pb2.AuditEntry
    def __init__(self, entry: _Optional[_Union[_common_pb2.AuditEntry, _Mapping]] = ...) -> None: ...

class ListAuditEntriesRequest(_message.Message):
    __slots__ = ("tenant_id", "page_size", "cursor")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    page_size: int
    cursor: str
    def __init__(self, tenant_id: _Optional[str] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListAuditEntriesResponse(_message.Message):
    __slots__ = ("entries", "next_cursor")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[_common_pb2.AuditEntry]
    next_cursor: str
    def __init__(self, entries: _Optional[_Iterable[_Union[_common_pb2.AuditEntry, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class CreateOperatorRequest(_message.Message):
    __slots__ = ("name", "token_hash")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_HASH_FIELD_NUMBER: _ClassVar[int]
    name: str
    token_hash: bytes
    def __init__(self, name: _Optional[str] = ..., token_hash: _Optional[bytes] = ...) -> None: ...

class CreateOperatorResponse(_message.Message):
    __slots__ = ("operator",)
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    operator: _common_pb2.Operator
    def __init__(self, operator: _Optional[_Union[_common_pb2.Operator, _Mapping]] = ...) -> None: ...

class ListOperatorsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListOperatorsResponse(_message.Message):
    __slots__ = ("operators",)
    OPERATORS_FIELD_NUMBER: _ClassVar[int]
    operators: _containers.RepeatedCompositeFieldContainer[_common_pb2.Operator]
    def __init__(self, operators: _Optional[_Iterable[_Union[_common_pb2.Operator, _Mapping]]] = ...) -> None: ...

class RevokeOperatorRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class RevokeOperatorResponse(_message.Message):
    __slots__ = ("operator",)
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    operator: _common_pb2.Operator
    def __init__(self, operator: _Optional[_Union[_common_pb2.Operator, _Mapping]] = ...) -> None: ...

class AuthenticateOperatorRequest(_message.Message):
    __slots__ = ("token_hash",)
    TOKEN_HASH_FIELD_NUMBER: _ClassVar[int]
    token_hash: bytes
    def __init__(self, token_hash: _Optional[bytes] = ...) -> None: ...

class AuthenticateOperatorResponse(_message.Message):
    __slots__ = ("found", "operator")
    FOUND_FIELD_NUMBER: _ClassVar[int]
    OPERATOR_FIELD_NUMBER: _ClassVar[int]
    found: bool
    operator: _common_pb2.Operator
    def __init__(self, found: _Optional[bool] = ..., operator: _Optional[_Union[_common_pb2.Operator, _Mapping]] = ...) -> None: ...

class CreateTenantRequest(_message.Message):
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
    __slots__ = ("tenant_id", "name", "key_hash", "public_id", "scopes")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    KEY_HASH_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    name: str
    key_hash: bytes
    public_id: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tenant_id: _Optional[str] = ..., name: _Optional[str] = ..., key_hash: _Optional[bytes] = ..., public_id: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ...) -> None: ...

class CreateApiKeyResponse(_message.Message):
    __slots__ = ("key_id", "created_at", "scopes")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    created_at: _timestamp_pb2.Timestamp
    scopes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, key_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., scopes: _Optional[_Iterable[str]] = ...) -> None: ...

class AuthenticateApiKeyRequest(_message.Message):
    __slots__ = ("key_hash",)
    KEY_HASH_FIELD_NUMBER: _ClassVar[int]
    key_hash: bytes
    def __init__(self, key_hash: _Optional[bytes] = ...) -> None: ...

class AuthenticateApiKeyResponse(_message.Message):
    __slots__ = ("found", "tenant", "key_id", "key_name", "scopes")
    FOUND_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_NAME_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    found: bool
    tenant: _common_pb2.Tenant
    key_id: str
    key_name: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, found: _Optional[bool] = ..., tenant: _Optional[_Union[_common_pb2.Tenant, _Mapping]] = ..., key_id: _Optional[str] = ..., key_name: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ...) -> None: ...

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

class SetTenantLimitsRequest(_message.Message):
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
