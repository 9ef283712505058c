"""Which errors of the ledger's database mean "away, retry" (answered UNAVAILABLE, see
herald_ledger.db.outage) and which mean the request was wrong: told apart on real asyncpg
errors from the machine's PostgreSQL. The ledger's answer with its database stopped is
asserted in tests/resilience/test_zz_loss_checker.py."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from herald_ledger.db.outage import REASON, database_unreachable

from herald.cli.embedded import free_port


async def _raised(database_url: str, case: str) -> Exception:
    if case == "nothing listens":
        url = database_url.replace(database_url.split("@", 1)[1].split("/", 1)[0], f"127.0.0.1:{free_port()}")
        with pytest.raises(Exception) as raised:
            await asyncpg.connect(url, timeout=10)
        return raised.value
    connection = await asyncpg.connect(database_url)
    try:
        if case == "a dropped connection":
            killer = await asyncpg.connect(database_url)
            await killer.execute("SELECT pg_terminate_backend($1)", connection.get_server_pid())
            await killer.close()
            for _ in range(1000):  # the server's goodbye, read as it arrives
                if connection.is_closed():
                    break
                await asyncio.sleep(0.01)
            with pytest.raises(Exception) as raised:
                await connection.fetchval("SELECT 1")
            return raised.value
        with pytest.raises(Exception) as raised:
            await connection.fetchval("SELECT 1 / 0" if case == "a data error" else "SELECT * FROM no_such_table")
        return raised.value
    finally:
        await connection.close()


@pytest.mark.parametrize(
    ("case", "away"),
    [("nothing listens", True), ("a dropped connection", True), ("a data error", False), ("a bad statement", False)],
)
def test_an_outage_is_told_from_a_wrong_request(infra: dict[str, str], case: str, away: bool) -> None:
    error = asyncio.run(_raised(infra["database_url"], case))
    assert database_unreachable(error) == (REASON if away else None), repr(error)
