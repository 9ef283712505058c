"""Services talk over gRPC and NATS, never by importing each other: each service's code imports only the
shared kernel (`herald`) and its own package, and only the ledger imports a database driver."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SERVICES = Path(__file__).resolve().parent.parent / "services"
PACKAGES = {path.parent.name: path.name for path in SERVICES.glob("*/herald_*") if path.is_dir()}
DATABASE_DRIVERS = {"sqlalchemy", "asyncpg", "alembic", "psycopg", "psycopg2"}


def imported_modules(package: Path) -> set[tuple[str, str]]:
    found = set()
    for source in package.rglob("*.py"):
        tree = ast.parse(source.read_text(), filename=str(source))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {(alias.name.split(".")[0], str(source)) for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add((node.module.split(".")[0], str(source)))
    return found


@pytest.mark.parametrize("service", sorted(PACKAGES))
def test_a_service_imports_no_other_service(service: str) -> None:
    own = PACKAGES[service]
    others = set(PACKAGES.values()) - {own}
    imports = imported_modules(SERVICES / service / own)
    crossing = sorted(f"{where}: {module}" for module, where in imports if module in others)
    assert crossing == []
    if service != "ledger":
        drivers = sorted(f"{where}: {module}" for module, where in imports if module in DATABASE_DRIVERS)
        assert drivers == []


# What the ledger's RPC layer may take from SQLAlchemy: engines and connections to hand to
# the store, result rows, and the errors it answers. Statements are built only in
# herald_ledger/store/ (the tables, in herald_ledger/db/, may be named to the store's generic
# helpers, as rpc/subscriptions.py does).
RPC_SQLALCHEMY = {"sqlalchemy.ext.asyncio", "sqlalchemy.engine", "sqlalchemy.exc"}


def test_the_ledgers_rpc_layer_writes_no_sql() -> None:
    ledger = SERVICES / "ledger" / "herald_ledger"
    found = []
    for source in [ledger / "servicer.py", *sorted((ledger / "rpc").glob("*.py"))]:
        for node in ast.walk(ast.parse(source.read_text(), filename=str(source))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "sqlalchemy":
                if node.module not in RPC_SQLALCHEMY:
                    found.append(f"{source.name}: from {node.module}")
            elif isinstance(node, ast.Import):
                found += [f"{source.name}: import {a.name}" for a in node.names if a.name.split(".")[0] == "sqlalchemy"]
    assert found == []
