from herald.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetEmailWorkerStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetEmailWorkerStatusResponse(_message.Message):
    __slots__ = ("concurrency", "in_flight", "delivered_total", "failed_total", "dead_lettered_total", "circuits")
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    DELIVERED_TOTAL_FIELD_NUMBER: _ClassVar[int]
    FAILED_TOTAL_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTERED_TOTAL_FIELD_NUMBER: _ClassVar[int]
    CIRCUITS_FIELD_NUMBER: _ClassVar[int]
    concurrency: int
    in_flight: int
    delivered_total: int
    failed_total: int
    dead_lettered_total: int
    circuits: _containers.RepeatedCompositeFieldContainer[ProviderCircuit]
    def __init__(self, concurrency: _Optional[int] = ..., in_flight: _Optional[int] = ..., delivered_total: _Optional[int] = ..., failed_total: _Optional[int] = ..., dead_lettered_total: _Optional[int] = ..., circuits: _Optional[_Iterable[_Union[ProviderCircuit, _Mapping]]] = ...) -> None: ...

class ProviderCircuit(_message.Message):
    __slots__ = ("tenant_id", "provider_id", "provider", "state")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    provider_id: str
    provider: str
    state: str
    def __init__(self, tenant_id: _Optional[str] = ..., provider_id: _Optional[str] = ..., provider: _Optional[str] = ..., state: _Optional[str] = ...) -> None: ...

class RegisterDomainRequest(_message.Message):
    __slots__ = ("tenant_id", "provider_id", "domain")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    provider_id: str
    domain: str
    def __init__(self, tenant_id: _Optional[str] = ..., provider_id: _Optional[str] = ..., domain: _Optional[str] = ...) -> None: ...

class RegisterDomainResponse(_message.Message):
    __slots__ = ("domain",)
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    domain: _common_pb2.SendingDomain
    def __init__(self, domain: _Optional[_Union[_common_pb2.SendingDomain, _Mapping]] = ...) -> None: ...

class VerifyDomainRequest(_message.Message):
    __slots__ = ("tenant_id", "provider_id", "provider_domain_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_DOMAIN_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    provider_id: str
    provider_domain_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., provider_id: _Optional[str] = ..., provider_domain_id: _Optional[str] = ...) -> None: ...

class VerifyDomainResponse(_message.Message):
    __slots__ = ("domain",)
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    domain: _common_pb2.SendingDomain
    def __init__(self, domain: _Optional[_Union[_common_pb2.SendingDomain, _Mapping]] = ...) -> None: ...

class ValidateCredentialRequest(_message.Message):
    __slots__ = ("credential", "base_url")
    CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    credential: _common_pb2.ProviderCredential
    base_url: str
    def __init__(self, credential: _Optional[_Union[_common_pb2.ProviderCredential, _Mapping]] = ..., base_url: _Optional[str] = ...) -> None: ...

class ValidateCredentialResponse(_message.Message):
    __slots__ = ("valid", "reason", "provider_unreachable")
    VALID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_UNREACHABLE_FIELD_NUMBER: _ClassVar[int]
    valid: bool
    reason: str
    provider_unreachable: bool
    def __init__(self, valid: _Optional[bool] = ..., reason: _Optional[str] = ..., provider_unreachable: _Optional[bool] = ...) -> None: ...

class EmailDelivery(_message.Message):
    __slots__ = ("job_id", "tenant_id", "priority", "request", "idempotency_key", "ordering_key", "run")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    ORDERING_KEY_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    tenant_id: str
    priority: _common_pb2.Priority
    request: _common_pb2.EmailRequest
    idempotency_key: str
    ordering_key: str
    run: int
    def __init__(self, job_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., priority: _Optional[_Union[_common_pb2.Priority, str]] = ..., request: _Optional[_Union[_common_pb2.EmailRequest, _Mapping]] = ..., idempotency_key: _Optional[str] = ..., ordering_key: _Optional[str] = ..., run: _Optional[int] = ...) -> None: ...
