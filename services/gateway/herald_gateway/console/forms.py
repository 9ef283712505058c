"""Reading what people type into console forms into what the HTTP API takes."""

from __future__ import annotations

from typing import Any

import orjson


class FormError(ValueError):
    """A field the console could not turn into an API value; the message names it."""


def header_lines(raw: str, field: str = "headers") -> dict[str, str]:
    """`Name: value` per line (blank lines ignored)."""
    headers: dict[str, str] = {}
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        name, colon, value = line.partition(":")
        if not colon or not name.strip():
            raise FormError(f"{field}: line {number} is not 'Name: value'")
        headers[name.strip()] = value.strip()
    return headers


def json_value(raw: str, field: str = "payload") -> Any:
    if not raw.strip():
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise FormError(f"{field}: not valid JSON ({error})") from error


def utc_time(raw: str) -> str:
    """A datetime-local value (no zone) as UTC; "" stays "" (no filter)."""
    raw = raw.strip()
    if raw and "Z" not in raw and "+" not in raw[10:]:
        return f"{raw}:00+00:00" if len(raw) == 16 else f"{raw}+00:00"
    return raw


def word_list(raw: str) -> list[str]:
    """Comma- or line-separated words."""
    return [part.strip() for part in raw.replace("\n", ",").split(",") if part.strip()]


def header_text(headers: dict[str, str]) -> str:
    """Headers as `header_lines` reads them: the text an edit form starts from."""
    return "\n".join(f"{k}: {v}" for k, v in headers.items())
