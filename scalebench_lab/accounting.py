"""Slurm accounting for the throwaway cluster: a private MariaDB and slurmdbd, so that `sacct` answers.

Everything lives under DIR/db (data directory, socket, logs) and DIR/slurmdbd.conf; MariaDB listens
on a free port of 127.0.0.1 in the controller's network namespace (the head namespace in netns
mode), without grant tables (nothing but this cluster's slurmdbd reaches it). The cluster module
starts and stops both as it does its other daemons (recorded in state.json, never killed by name).
"""
from __future__ import annotations

import os
import shutil
import socket
import time
from pathlib import Path

DB_NAME = "slurm_acct_db"
READY_TIMEOUT = 60.0
MARIADB_TOOLS = ("mariadbd", "mariadb-install-db", "mariadb-admin", "slurmdbd", "sacctmgr", "sacct")


def missing_tools() -> list[str]:
    return [t for t in MARIADB_TOOLS if shutil.which(t) is None and not Path("/usr/sbin", t).exists()]


def tool(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def db_dir(directory: Path) -> Path:
    return directory / "db"


def install_db_argv(directory: Path) -> list[str]:
    """A fresh data directory (once: a restarted cluster keeps its job records)."""
    return [tool("mariadb-install-db"), "--no-defaults", f"--datadir={db_dir(directory) / 'data'}", "--user=root",
            "--auth-root-authentication-method=normal", "--skip-test-db"]


def mariadbd_argv(directory: Path, port: int) -> list[str]:
    db = db_dir(directory)
    return [tool("mariadbd"), "--no-defaults", f"--datadir={db / 'data'}", f"--socket={db / 'mysqld.sock'}",
            f"--pid-file={db / 'mysqld.pid'}", f"--log-error={db / 'mysqld.err'}", "--user=root",
            "--bind-address=127.0.0.1", f"--port={port}", "--skip-grant-tables", "--skip-name-resolve",
            # small: a cluster of a few test jobs
            "--innodb-buffer-pool-size=16M", "--innodb-log-file-size=8M", "--performance-schema=OFF"]


def ping_argv(directory: Path) -> list[str]:
    return [tool("mariadb-admin"), "--no-defaults", f"--socket={db_dir(directory) / 'mysqld.sock'}", "ping"]


def slurmdbd_conf_text(directory: Path, db_port: int, dbd_port: int, dbd_host: str, munge_socket: Path) -> str:
    return "\n".join([
        "# Written by scalebench_lab/accounting.py for a throwaway cluster.",
        "AuthType=auth/munge",
        f"AuthInfo=socket={munge_socket}",  # the cluster's own munged
        f"DbdHost={dbd_host}",
        "DbdAddr=127.0.0.1" if dbd_host == "localhost" else f"DbdAddr={dbd_host}",
        f"DbdPort={dbd_port}",
        "SlurmUser=root",
        "StorageType=accounting_storage/mysql",
        "StorageHost=127.0.0.1",
        f"StoragePort={db_port}",
        "StorageUser=root",
        f"StorageLoc={DB_NAME}",
        f"LogFile={directory / 'log' / 'slurmdbd.log'}",
        f"PidFile={directory / 'run' / 'slurmdbd.pid'}",
        "DebugLevel=info",
    ]) + "\n"


def write_slurmdbd_conf(directory: Path, db_port: int, dbd_port: int, dbd_host: str, munge_socket: Path) -> Path:
    """slurmdbd reads slurmdbd.conf beside slurm.conf; it refuses one others can read."""
    path = directory / "slurmdbd.conf"
    path.write_text(slurmdbd_conf_text(directory, db_port, dbd_port, dbd_host, munge_socket))
    os.chmod(path, 0o600)
    return path


def slurm_conf_lines(dbd_host: str, dbd_port: int, munge_socket: Path) -> list[str]:
    # AuthInfo does not reach slurmdbd's connections: they take their munged socket from AccountingStoragePass
    return ["AccountingStorageType=accounting_storage/slurmdbd", f"AccountingStorageHost={dbd_host}",
            f"AccountingStoragePort={dbd_port}", f"AccountingStoragePass={munge_socket}",
            "JobAcctGatherType=jobacct_gather/linux"]


def wait_until(predicate, what: str, timeout: float = READY_TIMEOUT, alive=None) -> None:
    """Poll predicate() until true; raise TimeoutError naming `what`, or RuntimeError when alive() says the
    daemon died."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if alive is not None and not alive():
            raise RuntimeError(f"{what}: the daemon exited")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} within {timeout:g} s")
        time.sleep(0.2)
