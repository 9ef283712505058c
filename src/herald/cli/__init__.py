"""The `herald` command: run a service, bring up a development stack, manage tenants.

One module a family of commands: `serve.py` (run, migrate, up), `tenants.py` (tenant, apikey),
`keys.py` (keys), `dlq.py` (dlq), `access.py` (audit, operator); what the operator commands share is in `admin.py`.
"""

from __future__ import annotations

import sys

import click

from herald.cli.access import audit, operator
from herald.cli.admin import DATA_DIR_ENV, DEFAULT_DATA_DIR, PLANS
from herald.cli.dlq import dlq
from herald.cli.keys import keys
from herald.cli.serve import migrate, run, status, up
from herald.cli.tenants import apikey, tenant

__all__ = ["DATA_DIR_ENV", "DEFAULT_DATA_DIR", "PLANS", "main"]


@click.group()
def main() -> None:
    """Herald: multi-tenant notification delivery."""


for _command in (run, migrate, up, status, tenant, apikey, keys, dlq, audit, operator):
    main.add_command(_command)


if __name__ == "__main__":
    sys.exit(main())
