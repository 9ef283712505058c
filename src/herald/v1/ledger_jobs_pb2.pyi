import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from herald.v1 import common_pb2 as _common_pb2
from herald.v1 import ledger_pb2 as _ledger_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class IdempotencyState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    IDEMPOTENCY_STATE_UNSPECIFIED: _ClassVar[IdempotencyState]
    IDEMPOTENCY_STATE_NEW: _ClassVar[IdempotencyState]
    IDEMPOTENCY_STATE_IN_FLIGHT: _ClassVar[IdempotencyState]
    IDEMPOTENCY_STATE_COMPLETED: _ClassVar[IdempotencyState]
    IDEMPOTENCY_STATE_MISMATCH: _ClassVar[IdempotencyState]
IDEMPOTENCY_STATE_UNSPECIFIED: IdempotencyState
IDEMPOTENCY_STATE_NEW: IdempotencyState
IDEMPOTENCY_STATE_IN_FLIGHT: IdempotencyState
IDEMPOTENCY_STATE_COMPLETED: IdempotencyState
IDEMPOTENCY_STATE_MISMATCH: IdempotencyState

class CreateJobsRequest(_message.Message):
    __slots__ = ("drafts",)
    DRAFTS_FIELD_NUMBER: _ClassVar[int]
    drafts: _containers.RepeatedCompositeFieldContainer[_ledger_pb2.JobDraft]
    def __init__(self, drafts: _Optional[_Iterable[_Union[_ledger_pb2.JobDraft, _Mapping]]] = ...) -> None: ...

class DraftOutcome(_message.Message):
    __slots__ = ("job", "rejection", "detail", "replayed")
    JOB_FIELD_NUMBER: _ClassVar[int]
    REJECTION_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    job: _common_pb2.Job
    rejection: _ledger_pb2.Rejection
    detail: str
    replayed: bool
    def __init__(self, job: _Optional[_Union[_common_pb2.Job, _Mapping]] = ..., rejection: _Optional[_Union[_ledger_pb2.Rejection, str]] = ..., detail: _Optional[str] = ..., replayed: _Optional[bool] = ...) -> None: ...

class CreateJobsResponse(_message.Message):
    __slots__ = ("outcomes",)
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    outcomes: _containers.RepeatedCompositeFieldContainer[DraftOutcome]
    def __init__(self, outcomes: _Optional[_Iterable[_Union[DraftOutcome, _Mapping]]] = ...) -> None: ...

class GetJobRequest(_message.Message):
    __slots__ = ("tenant_id", "job_id", "include_request")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_REQUEST_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    job_id: str
    include_request: bool
    def __init__(self, tenant_id: _Optional[str] = ..., job_id: _Optional[str] = ..., include_request: _Optional[bool] = ...) -> None: ...

class GetJobResponse(_message.Message):
    __slots__ = ("job",)
    JOB_FIELD_NUMBER: _ClassVar[int]
    job: _common_pb2.Job
    def __init__(self, job: _Optional[_Union[_common_pb2.Job, _Mapping]] = ...) -> None: ...

class ListJobsRequest(_message.Message):
    __slots__ = ("tenant_id", "page_size", "cursor", "status", "channel", "created_after", "created_before", "url", "event_id", "target_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    CREATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    page_size: int
    cursor: str
    status: _common_pb2.JobStatus
    channel: _common_pb2.Channel
    created_after: _timestamp_pb2.Timestamp
    created_before: _timestamp_pb2.Timestamp
    url: str
    event_id: str
    target_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ..., status: _Optional[_Union[_common_pb2.JobStatus, str]] = ..., channel: _Optional[_Union[_common_pb2.Channel, str]] = ..., created_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., url: _Optional[str] = ..., event_id: _Optional[str] = ..., target_id: _Optional[str] = ...) -> None: ...

class ListJobsResponse(_message.Message):
    __slots__ = ("jobs", "next_cursor")
    JOBS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[_common_pb2.Job]
    next_cursor: str
    def __init__(self, jobs: _Optional[_Iterable[_Union[_common_pb2.Job, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class DeliveryStart(_message.Message):
    __slots__ = ("job_id", "proceed", "status", "attempt_count", "wait", "wait_s")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    PROCEED_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_COUNT_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    WAIT_S_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    proceed: bool
    status: _common_pb2.JobStatus
    attempt_count: int
    wait: bool
    wait_s: float
    def __init__(self, job_id: _Optional[str] = ..., proceed: _Optional[bool] = ..., status: _Optional[_Union[_common_pb2.JobStatus, str]] = ..., attempt_count: _Optional[int] = ..., wait: _Optional[bool] = ..., wait_s: _Optional[float] = ...) -> None: ...

class AttemptResult(_message.Message):
    __slots__ = ("attempt", "next_status", "error", "dead_lettered", "dead_letter_sequence", "retry_delay_s", "parked", "answered")
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    NEXT_STATUS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTERED_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTER_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    RETRY_DELAY_S_FIELD_NUMBER: _ClassVar[int]
    PARKED_FIELD_NUMBER: _ClassVar[int]
    ANSWERED_FIELD_NUMBER: _ClassVar[int]
    attempt: _common_pb2.Attempt
    next_status: _common_pb2.JobStatus
    error: str
    dead_lettered: bool
    dead_letter_sequence: int
    retry_delay_s: float
    parked: bool
    answered: AnsweredLane
    def __init__(self, attempt: _Optional[_Union[_common_pb2.Attempt, _Mapping]] = ..., next_status: _Optional[_Union[_common_pb2.JobStatus, str]] = ..., error: _Optional[str] = ..., dead_lettered: _Optional[bool] = ..., dead_letter_sequence: _Optional[int] = ..., retry_delay_s: _Optional[float] = ..., parked: _Optional[bool] = ..., answered: _Optional[_Union[AnsweredLane, _Mapping]] = ...) -> None: ...

class AnsweredLane(_message.Message):
    __slots__ = ("tenant_id", "lane")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    LANE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    lane: str
    def __init__(self, tenant_id: _Optional[str] = ..., lane: _Optional[str] = ...) -> None: ...

class AdvanceDeliveriesRequest(_message.Message):
    __slots__ = ("results", "start_job_ids")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    START_JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[AttemptResult]
    start_job_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, results: _Optional[_Iterable[_Union[AttemptResult, _Mapping]]] = ..., start_job_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class AdvanceDeliveriesResponse(_message.Message):
    __slots__ = ("recorded", "starts")
    RECORDED_FIELD_NUMBER: _ClassVar[int]
    STARTS_FIELD_NUMBER: _ClassVar[int]
    recorded: int
    starts: _containers.RepeatedCompositeFieldContainer[DeliveryStart]
    def __init__(self, recorded: _Optional[int] = ..., starts: _Optional[_Iterable[_Union[DeliveryStart, _Mapping]]] = ...) -> None: ...

class WaitingNote(_message.Message):
    __slots__ = ("job_id", "reason")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    reason: str
    def __init__(self, job_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class NoteWaitingRequest(_message.Message):
    __slots__ = ("notes",)
    NOTES_FIELD_NUMBER: _ClassVar[int]
    notes: _containers.RepeatedCompositeFieldContainer[WaitingNote]
    def __init__(self, notes: _Optional[_Iterable[_Union[WaitingNote, _Mapping]]] = ...) -> None: ...

class NoteWaitingResponse(_message.Message):
    __slots__ = ("noted",)
    NOTED_FIELD_NUMBER: _ClassVar[int]
    noted: int
    def __init__(self, noted: _Optional[int] = ...) -> None: ...

class ParkedDelivery(_message.Message):
    __slots__ = ("job_id", "lane", "delay_s")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    LANE_FIELD_NUMBER: _ClassVar[int]
    DELAY_S_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    lane: str
    delay_s: float
    def __init__(self, job_id: _Optional[str] = ..., lane: _Optional[str] = ..., delay_s: _Optional[float] = ...) -> None: ...

class ParkDeliveriesRequest(_message.Message):
    __slots__ = ("parks",)
    PARKS_FIELD_NUMBER: _ClassVar[int]
    parks: _containers.RepeatedCompositeFieldContainer[ParkedDelivery]
    def __init__(self, parks: _Optional[_Iterable[_Union[ParkedDelivery, _Mapping]]] = ...) -> None: ...

class ParkDeliveriesResponse(_message.Message):
    __slots__ = ("parked_job_ids",)
    PARKED_JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    parked_job_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, parked_job_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ReleaseParkedRequest(_message.Message):
    __slots__ = ("tenant_id", "lane")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    LANE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    lane: str
    def __init__(self, tenant_id: _Optional[str] = ..., lane: _Optional[str] = ...) -> None: ...

class ReleaseParkedResponse(_message.Message):
    __slots__ = ("released",)
    RELEASED_FIELD_NUMBER: _ClassVar[int]
    released: int
    def __init__(self, released: _Optional[int] = ...) -> None: ...

class ListAttemptsRequest(_message.Message):
    __slots__ = ("tenant_id", "job_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    job_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., job_id: _Optional[str] = ...) -> None: ...

class ListAttemptsResponse(_message.Message):
    __slots__ = ("attempts",)
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    attempts: _containers.RepeatedCompositeFieldContainer[_common_pb2.Attempt]
    def __init__(self, attempts: _Optional[_Iterable[_Union[_common_pb2.Attempt, _Mapping]]] = ...) -> None: ...

class IdempotencyClaim(_message.Message):
    __slots__ = ("tenant_id", "key", "request_hash")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_HASH_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    key: str
    request_hash: bytes
    def __init__(self, tenant_id: _Optional[str] = ..., key: _Optional[str] = ..., request_hash: _Optional[bytes] = ...) -> None: ...

class IdempotencyClaimResult(_message.Message):
    __slots__ = ("state", "status_code", "body")
    STATE_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    state: IdempotencyState
    status_code: int
    body: bytes
    def __init__(self, state: _Optional[_Union[IdempotencyState, str]] = ..., status_code: _Optional[int] = ..., body: _Optional[bytes] = ...) -> None: ...

class IdempotencyCompletion(_message.Message):
    __slots__ = ("tenant_id", "key", "status_code", "body")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    key: str
    status_code: int
    body: bytes
    def __init__(self, tenant_id: _Optional[str] = ..., key: _Optional[str] = ..., status_code: _Optional[int] = ..., body: _Optional[bytes] = ...) -> None: ...

class AbandonIdempotentRequest(_message.Message):
    __slots__ = ("tenant_id", "key")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    key: str
    def __init__(self, tenant_id: _Optional[str] = ..., key: _Optional[str] = ...) -> None: ...

class AbandonIdempotentResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class WalkRecord(_message.Message):
    __slots__ = ("job_id", "calls", "next_status", "error", "provider_id", "provider_message_id", "dead_lettered", "dead_letter_sequence", "retry_delay_s", "parked")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    NEXT_STATUS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTERED_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTER_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    RETRY_DELAY_S_FIELD_NUMBER: _ClassVar[int]
    PARKED_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    calls: _containers.RepeatedCompositeFieldContainer[_common_pb2.Attempt]
    next_status: _common_pb2.JobStatus
    error: str
    provider_id: str
    provider_message_id: str
    dead_lettered: bool
    dead_letter_sequence: int
    retry_delay_s: float
    parked: bool
    def __init__(self, job_id: _Optional[str] = ..., calls: _Optional[_Iterable[_Union[_common_pb2.Attempt, _Mapping]]] = ..., next_status: _Optional[_Union[_common_pb2.JobStatus, str]] = ..., error: _Optional[str] = ..., provider_id: _Optional[str] = ..., provider_message_id: _Optional[str] = ..., dead_lettered: _Optional[bool] = ..., dead_letter_sequence: _Optional[int] = ..., retry_delay_s: _Optional[float] = ..., parked: _Optional[bool] = ...) -> None: ...

class AdvanceWalksRequest(_message.Message):
    __slots__ = ("walks", "start_job_ids")
    WALKS_FIELD_NUMBER: _ClassVar[int]
    START_JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    walks: _containers.RepeatedCompositeFieldContainer[WalkRecord]
    start_job_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, walks: _Optional[_Iterable[_Union[WalkRecord, _Mapping]]] = ..., start_job_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class AdvanceWalksResponse(_message.Message):
    __slots__ = ("recorded", "starts")
    RECORDED_FIELD_NUMBER: _ClassVar[int]
    STARTS_FIELD_NUMBER: _ClassVar[int]
    recorded: int
    starts: _containers.RepeatedCompositeFieldContainer[DeliveryStart]
    def __init__(self, recorded: _Optional[int] = ..., starts: _Optional[_Iterable[_Union[DeliveryStart, _Mapping]]] = ...) -> None: ...

class RetryJobsRequest(_message.Message):
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

class RetryOutcome(_message.Message):
    __slots__ = ("job_id", "retried", "status", "detail")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    RETRIED_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    retried: bool
    status: _common_pb2.JobStatus
    detail: str
    def __init__(self, job_id: _Optional[str] = ..., retried: _Optional[bool] = ..., status: _Optional[_Union[_common_pb2.JobStatus, str]] = ..., detail: _Optional[str] = ...) -> None: ...

class RetryJobsResponse(_message.Message):
    __slots__ = ("outcomes", "released_dead_letter_sequences")
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    RELEASED_DEAD_LETTER_SEQUENCES_FIELD_NUMBER: _ClassVar[int]
    outcomes: _containers.RepeatedCompositeFieldContainer[RetryOutcome]
    released_dead_letter_sequences: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, outcomes: _Optional[_Iterable[_Union[RetryOutcome, _Mapping]]] = ..., released_dead_letter_sequences: _Optional[_Iterable[int]] = ...) -> None: ...

class ListDeadLettersRequest(_message.Message):
    __slots__ = ("tenant_id", "since", "include_retried", "page_size", "cursor")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_RETRIED_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    since: _timestamp_pb2.Timestamp
    include_retried: bool
    page_size: int
    cursor: str
    def __init__(self, tenant_id: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., include_retried: _Optional[bool] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListDeadLettersResponse(_message.Message):
    __slots__ = ("entries", "next_cursor")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[_common_pb2.DeadLetter]
    next_cursor: str
    def __init__(self, entries: _Optional[_Iterable[_Union[_common_pb2.DeadLetter, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class GetDeadLetterRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class GetDeadLetterResponse(_message.Message):
    __slots__ = ("entry", "job")
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    entry: _common_pb2.DeadLetter
    job: _common_pb2.Job
    def __init__(self, entry: _Optional[_Union[_common_pb2.DeadLetter, _Mapping]] = ..., job: _Optional[_Union[_common_pb2.Job, _Mapping]] = ...) -> None: ...

class ClaimIdempotencyKeysRequest(_message.Message):
    __slots__ = ("claims",)
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    claims: _containers.RepeatedCompositeFieldContainer[IdempotencyClaim]
    def __init__(self, claims: _Optional[_Iterable[_Union[IdempotencyClaim, _Mapping]]] = ...) -> None: ...

class ClaimIdempotencyKeysResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[IdempotencyClaimResult]
    def __init__(self, results: _Optional[_Iterable[_Union[IdempotencyClaimResult, _Mapping]]] = ...) -> None: ...

class CompleteIdempotencyKeysRequest(_message.Message):
    __slots__ = ("completions",)
    COMPLETIONS_FIELD_NUMBER: _ClassVar[int]
    completions: _containers.RepeatedCompositeFieldContainer[IdempotencyCompletion]
    def __init__(self, completions: _Optional[_Iterable[_Union[IdempotencyCompletion, _Mapping]]] = ...) -> None: ...

class CompleteIdempotencyKeysResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ResendJobRequest(_message.Message):
    __slots__ = ("tenant_id", "job_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    job_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., job_id: _Optional[str] = ...) -> None: ...

class ResendJobResponse(_message.Message):
    __slots__ = ("job", "rejection", "detail")
    JOB_FIELD_NUMBER: _ClassVar[int]
    REJECTION_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    job: _common_pb2.Job
    rejection: _ledger_pb2.Rejection
    detail: str
    def __init__(self, job: _Optional[_Union[_common_pb2.Job, _Mapping]] = ..., rejection: _Optional[_Union[_ledger_pb2.Rejection, str]] = ..., detail: _Optional[str] = ...) -> None: ...

class ExpungeJobPayloadRequest(_message.Message):
    __slots__ = ("tenant_id", "job_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    job_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., job_id: _Optional[str] = ...) -> None: ...

class ExpungeJobPayloadResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
