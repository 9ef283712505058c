from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class GetEmailWorkerStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetEmailWorkerStatusResponse(_message.Message):
    __slots__ = ("concurrency", "in_flight")
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    concurrency: int
    in_flight: int
    def __init__(self, concurrency: _Optional[int] = ..., in_flight: _Optional[int] = ...) -> None: ...
