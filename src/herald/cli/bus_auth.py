"""The users of a development stack's bus: one password per NATS user, and the server's configuration.

`herald up` starts its embedded nats-server with this configuration, so only the stack's own
services (each with the permissions `herald.bus.permissions` gives it), the intake user of
internal backends and the operators' admin user get in. Each user's `user:password` is a file
of its own under `<data dir>/nats-users/` (0600), generated once and kept, so the services of a
restarted stack (and a restarted server) agree on them; a service is handed its own file's path
(HERALD_NATS_USER_FILE), never another's. The server's configuration holds the passwords too,
so it is 0600 as well.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict

from herald.bus.connection import read_user_file
from herald.bus.permissions import ADMIN_USER, SERVICES, USERS, permissions
from herald.cli.stack_env import write_private

USER_FILE = "HERALD_NATS_USER_FILE"
LANES = "HERALD_FAIRNESS_LANES"


class ServerAuth(TypedDict):
    config_file: Path
    user_file: Path


class BusUsers:
    """The users of the bus under prefix `prefix` (with `lanes` fairness lanes), kept in `directory`."""

    def __init__(self, directory: Path, prefix: str = "herald", lanes: int = 16) -> None:
        self.directory = directory.resolve()
        self.prefix = prefix
        self.lanes = lanes
        self.config_file = self.directory / "nats-server.conf"

    def user_file(self, user: str) -> Path:
        return self.directory / user

    @property
    def admin_file(self) -> Path:
        """The operators' credential (endpoints.json's `nats_credentials_file`)."""
        return self.user_file(ADMIN_USER)

    def admin(self) -> tuple[str, str]:
        return read_user_file(self.admin_file)

    def ensure(self) -> Path:
        """Generates the passwords that do not exist yet and (re)writes the server's configuration;
        returns its path (nats-server's `-c`)."""
        users = []
        grants = permissions(self.prefix, self.lanes)
        for user in USERS:
            path = self.user_file(user)
            if not path.exists():
                write_private(path, f"{user}:{secrets.token_urlsafe(24)}\n")
            _, password = read_user_file(path)
            users.append({"user": user, "password": password, "permissions": grants[user].as_config()})
        # nats-server's configuration takes JSON values.
        write_private(self.config_file, f"authorization: {json.dumps({'users': users}, indent=1)}\n")
        return self.config_file

    @classmethod
    def for_stack(cls, data_dir: Path, prefix: str, env: Mapping[str, str]) -> BusUsers:
        """A stack's users, in its data directory, for the lanes its services will be given."""
        lanes = env.get(LANES) or os.environ.get(LANES) or "16"
        return cls(data_dir / "nats-users", prefix, int(lanes))

    def server_options(self) -> ServerAuth:
        """EmbeddedNats's and EmbeddedNatsCluster's arguments for a server these users log in to."""
        return {"config_file": self.ensure(), "user_file": self.admin_file}

    def service_env(self, service: str) -> dict[str, str]:
        """What a service process is given to connect as itself."""
        if service not in SERVICES:
            raise ValueError(f"no bus user for {service!r}")
        return {USER_FILE: str(self.user_file(service))}
