"""Publishing a build: a staging folder beside ``--out``, swapped in only when the build
succeeded, under a lock that keeps two builds out of one folder.

A build writes every file into ``.<name>.staging-<pid>`` next to the published folder
``<name>``. When it succeeded, :meth:`Staging.publish` carries the user's own files over (what
is in the published folder but not in its manifest ``.benchsite-files``: a ``CNAME``, a
``.git``) and notes how long each page took (``.benchsite-pages.json``: the next build hands
out the longest first), then renames the published folder aside (``.<name>.old-<pid>``) and
the staging folder in, and deletes the old one. A build that fails or is interrupted deletes
its staging folder and leaves the published site as it was.

The lock is ``.<name>.lock`` beside the folder (:mod:`benchsite._infra.lock`), held for the
whole build: the system releases it when its process ends, however it ends, so a dead build's
lock is simply taken over; the file keeps the holder's PID for the message.
Under the lock, what a dead build left (a staging folder, a folder renamed aside before the new
one was in) is cleaned up or put back first.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from benchsite._infra import lock as locks
from benchsite._infra import signals
from benchsite.errors import BenchsiteError

MANIFEST = ".benchsite-files"  # the files the build wrote, one a line; the rest is the user's
PAGE_SECONDS = ".benchsite-pages.json"  # how long each page took: the next build's order


@dataclass(frozen=True)
class Staging:
    """Where a build writes (``folder``) and the site it replaces when it succeeded (``out``)."""

    out: Path
    folder: Path

    def publish(self, written: set[str], seconds: dict[str, float]) -> None:
        """Carry the user's files over, write the manifest and how long each page took
        (``seconds``, read by the next build: :func:`page_seconds`), swap the folders (see the
        module)."""
        _carry_user_files(self.out, self.folder)
        (self.folder / MANIFEST).write_text("\n".join(sorted(written)) + "\n", encoding="utf-8")
        times = json.dumps({name: round(value, 3) for name, value in seconds.items()}, indent=0)
        (self.folder / PAGE_SECONDS).write_text(times + "\n", encoding="utf-8")
        aside = _beside(self.out, "old")
        with signals.held(signal.SIGINT, signal.SIGTERM):  # no moment without a site at ``out``
            if self.out.exists():
                os.rename(self.out, aside)
            os.rename(self.folder, self.out)
        shutil.rmtree(aside, ignore_errors=True)


@contextlib.contextmanager
def staged(out: Path) -> Iterator[Staging]:
    """Lock ``out``, clean up after a dead build, and give a fresh staging folder; it is
    deleted when the block raises (the published site is then untouched)."""
    out = Path(os.path.realpath(out))  # a link to the site: publish beside what it points to
    if out.exists() and not out.is_dir():
        raise BenchsiteError(f"--out {out} is a file, not a folder: pass a folder for the site")
    if Path.cwd().resolve().is_relative_to(out):  # it would be swapped away under your feet
        raise BenchsiteError(f"--out {out} holds the current folder: pass a folder for the site")
    with _locked(out):
        _clean_leftovers(out)
        folder = _beside(out, "staging")
        folder.mkdir()
        try:
            yield Staging(out, folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)  # gone already when published


def page_seconds(out: Path) -> dict[str, float]:
    """How long each page took in the build that published ``out`` (page name → seconds);
    nothing where it has no such record, or one that cannot be read."""
    try:
        seconds = json.loads((out / PAGE_SECONDS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(seconds, dict):
        return {}
    return {str(k): float(v) for k, v in seconds.items() if isinstance(v, int | float)}


def _beside(out: Path, what: str) -> Path:
    return out.with_name(f".{out.name}.{what}-{os.getpid()}")


@contextlib.contextmanager
def _locked(out: Path) -> Iterator[None]:
    """Hold ``.<name>.lock`` beside ``out`` (:func:`benchsite._infra.lock.exclusive`); one
    line (exit 2) when another build holds it or the folder cannot be written."""
    lock = out.with_name(f".{out.name}.lock")
    with contextlib.ExitStack() as held:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            held.enter_context(locks.exclusive(lock, lambda pid: _busy(out, pid)))
        except OSError as exc:
            raise BenchsiteError(
                f"cannot write the site to {out} ({exc.strerror or exc}): pass a writable --out"
            ) from None
        yield


def _busy(out: Path, pid: int | None) -> BenchsiteError:
    return BenchsiteError(
        f"another benchsite build (PID {pid or '?'}) is writing {out}: wait for it to "
        "finish, or pass another --out"
    )


def _clean_leftovers(out: Path) -> None:
    """Delete dead builds' staging folders; put back a site renamed aside and never replaced
    (a build killed between the two renames of :meth:`Staging.publish`), else delete it."""
    for leftover in sorted(out.parent.glob(f".{out.name}.staging-*")):
        shutil.rmtree(leftover, ignore_errors=True)
    for aside in sorted(out.parent.glob(f".{out.name}.old-*")):
        if not out.exists():
            os.rename(aside, out)
        else:
            shutil.rmtree(aside, ignore_errors=True)


def _carry_user_files(out: Path, staging: Path) -> None:
    """Link every file of ``out`` that no build wrote (not in its manifest) into ``staging``,
    unless this build wrote the same path: it is the user's, and stays."""
    if not out.is_dir():
        return
    manifest = out / MANIFEST
    built = set(manifest.read_text(encoding="utf-8").splitlines()) if manifest.exists() else set()
    built |= {MANIFEST, PAGE_SECONDS}
    for folder, names, files in os.walk(out):
        relative = Path(folder).relative_to(out)
        links = [name for name in names if os.path.islink(os.path.join(folder, name))]
        for name in [*files, *links]:
            path = (relative / name).as_posix()
            if path not in built and not os.path.lexists(staging / path):
                copy_file(out / path, staging / path)
        for name in set(names) - set(links):  # the user's empty folders too
            if not os.listdir(os.path.join(folder, name)):
                (staging / relative / name).mkdir(parents=True, exist_ok=True)


def copy_file(source: Path, target: Path) -> None:
    """``source`` at ``target`` as a hard link (no copying), a copy where links fail; a
    symbolic link stays one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_symlink():
        os.symlink(os.readlink(source), target)
        return
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)
