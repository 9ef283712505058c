import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from herald.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

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
    __slots__ = ("tenant_id", "target_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    target_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., target_id: _Optional[str] = ...) -> None: ...

class GetSigningSecretsResponse(_message.Message):
    __slots__ = ("sealed_current", "sealed_previous", "previous_expires_at", "target_keys")
    SEALED_CURRENT_FIELD_NUMBER: _ClassVar[int]
    SEALED_PREVIOUS_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    TARGET_KEYS_FIELD_NUMBER: _ClassVar[int]
    sealed_current: bytes
    sealed_previous: bytes
    previous_expires_at: _timestamp_pb2.Timestamp
    target_keys: _containers.RepeatedCompositeFieldContainer[TargetSigningKey]
    def __init__(self, sealed_current: _Optional[bytes] = ..., sealed_previous: _Optional[bytes] = ..., previous_expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., target_keys: _Optional[_Iterable[_Union[TargetSigningKey, _Mapping]]] = ...) -> None: ...

class TargetSigningKey(_message.Message):
    __slots__ = ("algorithm", "sealed", "aad_row", "expires_at")
    ALGORITHM_FIELD_NUMBER: _ClassVar[int]
    SEALED_FIELD_NUMBER: _ClassVar[int]
    AAD_ROW_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    algorithm: str
    sealed: bytes
    aad_row: str
    expires_at: _timestamp_pb2.Timestamp
    def __init__(self, algorithm: _Optional[str] = ..., sealed: _Optional[bytes] = ..., aad_row: _Optional[str] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetTargetSecretRequest(_message.Message):
    __slots__ = ("tenant_id", "target_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    target_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., target_id: _Optional[str] = ...) -> None: ...

class GetTargetSecretResponse(_message.Message):
    __slots__ = ("key", "public_key")
    KEY_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_KEY_FIELD_NUMBER: _ClassVar[int]
    key: str
    public_key: str
    def __init__(self, key: _Optional[str] = ..., public_key: _Optional[str] = ...) -> None: ...

class RotateTargetSecretRequest(_message.Message):
    __slots__ = ("tenant_id", "target_id", "key", "overlap_s", "algorithm")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    OVERLAP_S_FIELD_NUMBER: _ClassVar[int]
    ALGORITHM_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    target_id: str
    key: str
    overlap_s: float
    algorithm: str
    def __init__(self, tenant_id: _Optional[str] = ..., target_id: _Optional[str] = ..., key: _Optional[str] = ..., overlap_s: _Optional[float] = ..., algorithm: _Optional[str] = ...) -> None: ...

class RotateTargetSecretResponse(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: str
    def __init__(self, key: _Optional[str] = ...) -> None: ...

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
