"""Structured JSON logs, one object per line on stderr.

Values that look like Herald secrets (API keys, operator tokens, signing secrets) and the
passwords of `scheme://user:password@host` URLs are masked by the formatter itself, in the
message and in every extra field however deeply nested (dicts, lists, tuples, sets, and the
text of any other object), so a careless `log.info("...", extra={"key": key})` or
`extra={"request": {"headers": [...]}}` cannot leak one.
"""

from __future__ import annotations

import logging
import re
import sys
import time
from typing import Any

import orjson

from herald.secrets import mask_url_passwords

_SECRET_PATTERNS = re.compile(r"(hk_(?:live|op)_[A-Za-z0-9_\-]+|whsec_[A-Za-z0-9+/=]+)")
_RESERVED = set(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime", "taskName"}


def redact(text: str) -> str:
    return mask_url_passwords(_SECRET_PATTERNS.sub(lambda m: m.group(0)[:8] + "****", text))


def scrub(value: Any, depth: int = 0) -> Any:
    """`value` with every string in it redacted: containers are walked (to a depth of 20, past
    which the rest is flattened to redacted text), numbers, booleans and None kept as they are,
    and anything else logged as its redacted `str()` (which is what the JSON would show)."""
    if isinstance(value, str):
        return redact(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    if depth < 20:
        if isinstance(value, dict):
            return {redact(str(k)): scrub(v, depth + 1) for k, v in value.items()}
        if isinstance(value, list | tuple | set | frozenset):
            return [scrub(v, depth + 1) for v in value]
    return redact(str(value))


class JsonFormatter(logging.Formatter):
    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "service": self.service,
            "logger": record.name,
            "msg": redact(record.getMessage()),
        }
        for key, value in record.__dict__.items():
            if key not in _RESERVED and not key.startswith("_"):
                entry[key] = scrub(value)
        if record.exc_info:
            entry["exc"] = redact(self.formatException(record.exc_info))
        return orjson.dumps(entry, default=str).decode()


def configure_logging(service: str, level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(service))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in ("uvicorn.access", "httpx", "httpcore", "nats", "asyncio"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def get_logger(name: str) -> logging.Logger:
    return logging.getLogger(name)
