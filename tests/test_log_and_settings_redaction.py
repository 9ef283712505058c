"""Secrets stay out of what an operator sees when something is printed: repr()/str() of the
settings (a traceback, a debug print) and every field of a log line, however nested."""

from __future__ import annotations

import logging

import orjson

from herald.config import Settings
from herald.crypto import hash_api_key, new_operator_token
from herald.telemetry.logging import JsonFormatter

DB_PASSWORD = "db-Pa55word-7f3e"
NATS_PASSWORD = "nats-Pa55word-91ac"


def test_settings_repr_hides_the_first_operator_and_url_passwords() -> None:
    token = "admin:" + hash_api_key(new_operator_token()).hex()
    settings = Settings(
        first_operator=token,
        database_url=f"postgresql://herald:{DB_PASSWORD}@db.internal:5432/herald",
        nats_url=f"nats://herald:{NATS_PASSWORD}@nats-0:4222,nats://herald:{NATS_PASSWORD}@nats-1:4222",
    )
    for shown in (repr(settings), str(settings)):
        assert token not in shown
        assert DB_PASSWORD not in shown and NATS_PASSWORD not in shown
        # Where it connects is still there, for the operator reading it.
        assert "postgresql://herald:****@db.internal:5432/herald" in shown
        assert "nats://herald:****@nats-1:4222" in shown
    # The values themselves are untouched: only their display is masked.
    assert DB_PASSWORD in settings.database_url


def _logged(**extra: object) -> str:
    record = logging.makeLogRecord({"name": "t", "levelname": "INFO", "msg": "m", **extra})
    return JsonFormatter("test").format(record)


def test_log_redaction_reaches_nested_fields() -> None:
    token = new_operator_token()
    line = _logged(
        request={"headers": [("authorization", f"Bearer {token}")], "meta": {"deep": [{"k": token}]}},
        tokens=(token,),
        url=f"postgresql://herald:{DB_PASSWORD}@db/herald",
        attempts=3,
    )
    assert token not in line
    assert DB_PASSWORD not in line
    entry = orjson.loads(line)
    assert entry["attempts"] == 3
    assert entry["request"]["headers"][0][0] == "authorization"
    assert entry["request"]["meta"]["deep"][0]["k"].endswith("****")
