"""Loaded by a process started with this folder on PYTHONPATH: its UUIDv7 ids are minted
from a clock HERALD_TEST_ID_CLOCK_SKEW_S seconds off (negative: behind), as on a machine
whose clock drifted. Only the ids: the process's other clocks stay right, so what the test
shows is what id-based ordering would do under skew, and nothing else changes."""

from __future__ import annotations

import os
import time

import uuid_utils

_SKEW_NS = int(float(os.environ.get("HERALD_TEST_ID_CLOCK_SKEW_S", "0")) * 1_000_000_000)
_real_uuid7 = uuid_utils.uuid7


def _skewed_uuid7(*, nanoseconds: int | None = None) -> uuid_utils.UUID:
    return _real_uuid7(nanoseconds=time.time_ns() + _SKEW_NS if nanoseconds is None else nanoseconds)


uuid_utils.uuid7 = _skewed_uuid7
