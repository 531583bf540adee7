"""Where a results store lives: a local folder, or a prefix of an object store.

``--results`` takes a folder, a ``file://`` URL (the same folder), or an object-store URL:
``s3://bucket/prefix`` (S3 and S3-compatible servers), ``gs://bucket/prefix`` (Google Cloud
Storage) or ``az://container/prefix`` (Azure Blob Storage). The filesystems are pyarrow's; they
take credentials and endpoints from the usual environment: ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_PROFILE``, ``AWS_ENDPOINT_URL``, ``AWS_DEFAULT_REGION`` for S3;
``GOOGLE_APPLICATION_CREDENTIALS`` for GCS; ``AZURE_STORAGE_ACCOUNT_NAME`` (required) and
``AZURE_STORAGE_ACCOUNT_KEY`` (else Azure's default credentials) for Azure. Query options of
pyarrow's URIs (``s3://bucket/prefix?region=eu-west-1``) pass through.

:class:`RemotePath` is the little of :class:`pathlib.Path` the store uses, over an object store:
joining, listing by pattern, existence, deletion. Object stores have no rename; the store writes
each part once under a unique key instead (see :mod:`benchsite.store.parts`).
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

from benchsite._infra.text import first_line
from benchsite.errors import StoreError

SCHEMES = ("s3", "gs", "az")


@dataclass(frozen=True, order=True)
class RemotePath:
    """A key prefix in an object store, addressed like a folder (``bucket/prefix/name``)."""

    scheme: str
    path: str
    fs: pafs.FileSystem = field(compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.scheme}://{self.path}"

    def __truediv__(self, name: str) -> RemotePath:
        return replace(self, path=f"{self.path.rstrip('/')}/{name}")

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]

    @property
    def parent(self) -> RemotePath:
        return replace(self, path=self.path.rstrip("/").rsplit("/", 1)[0])

    def glob(self, pattern: str) -> list[RemotePath]:
        """The entries whose names match ``pattern`` level by level (``host=*/run=*``)."""
        level = [self]
        for part in pattern.split("/"):
            level = [
                child
                for folder in level
                for child in folder.children()
                if fnmatch.fnmatchcase(child.name, part)
            ]
        return level

    def children(self) -> list[RemotePath]:
        selector = pafs.FileSelector(self.path, allow_not_found=True)
        with translated(self):
            infos = self.fs.get_file_info(selector)
        return [replace(self, path=info.path) for info in infos]

    def exists(self) -> bool:
        return self._type() != pafs.FileType.NotFound

    def is_dir(self) -> bool:
        return self._type() == pafs.FileType.Directory

    def _type(self) -> pafs.FileType:
        with translated(self):
            return self.fs.get_file_info(self.path).type

    def mkdir(self, parents: bool = False, exist_ok: bool = False) -> None:
        """Nothing to do: an object store's folders are the prefixes of its keys."""

    def unlink(self, missing_ok: bool = False) -> None:
        try:
            with translated(self):
                self.fs.delete_file(self.path)
        except StoreError:
            if not missing_ok or self.exists():
                raise

    def write_bytes(self, data: bytes) -> None:
        with translated(self), self.fs.open_output_stream(self.path) as out:
            out.write(data)

    def iterdir(self) -> list[RemotePath]:
        return self.children()

    def relative_to(self, other: RemotePath) -> Path:
        return Path(self.path).relative_to(other.path)


def locate(where: str | Path | RemotePath) -> Path | RemotePath:
    """The store ``--results`` names: a folder (a path or ``file://``) or a :class:`RemotePath`;
    a URL that cannot name a store is one line."""
    if isinstance(where, Path | RemotePath):
        return where
    if "://" not in where:
        return Path(where)
    parts = urlsplit(where)
    scheme = parts.scheme.lower()
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise StoreError(
                f"--results {where}: a file:// URL names a local folder, like file:///srv/results"
            )
        return Path(unquote(parts.path))
    if scheme not in SCHEMES:
        raise StoreError(
            f"--results {where}: unknown scheme {scheme!r}; use a folder, "
            f"file://, s3://, gs:// or az://"
        )
    if not parts.netloc:
        raise StoreError(f"--results {where}: name a bucket, like {scheme}://bucket/results")
    fs, path = _filesystem(where, scheme, parts.netloc, parts.path)
    return RemotePath(scheme, path.rstrip("/"), fs)


def _filesystem(url: str, scheme: str, bucket: str, path: str) -> tuple[pafs.FileSystem, str]:
    try:
        if scheme == "az":
            return _azure(), f"{bucket}{path}"
        return pafs.FileSystem.from_uri(url)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise StoreError(f"--results {url}: {first_line(exc)}") from None


def _azure() -> pafs.FileSystem:
    account = os.environ.get("AZURE_STORAGE_ACCOUNT_NAME") or os.environ.get(
        "AZURE_STORAGE_ACCOUNT"
    )
    if not account:
        raise ValueError("set AZURE_STORAGE_ACCOUNT_NAME (and AZURE_STORAGE_ACCOUNT_KEY) for az://")
    key = os.environ.get("AZURE_STORAGE_ACCOUNT_KEY")
    return pafs.AzureFileSystem(account_name=account, account_key=key)


@contextlib.contextmanager
def translated(where: RemotePath) -> Iterator[None]:
    """Turn an object store's error into one :class:`StoreError` line that says what to do; a
    key that vanished stays a :class:`FileNotFoundError` (callers handle it)."""
    try:
        yield
    except FileNotFoundError:
        raise
    except (OSError, pa.ArrowException) as exc:
        raise remote_error(exc, where) from None


def remote_error(exc: BaseException, where: RemotePath | str) -> StoreError:
    """The one line for an object store's error about ``where``."""
    text = first_line(exc)
    upper = text.upper()
    if "NETWORK_CONNECTION" in upper or "CURLCODE" in upper or "COULD NOT CONNECT" in upper:
        endpoint = os.environ.get("AWS_ENDPOINT_URL") or "the default endpoint"
        return StoreError(
            f"cannot reach the object store of {where} ({endpoint}): check "
            f"AWS_ENDPOINT_URL and the network ({text})"
        )
    if "NO_SUCH_BUCKET" in upper or "NOSUCHBUCKET" in upper:
        return StoreError(f"the bucket of {where} does not exist: create it or fix --results")
    if any(word in upper for word in _DENIED):
        return StoreError(
            f"access to {where} denied: set credentials (AWS_ACCESS_KEY_ID and "
            f"AWS_SECRET_ACCESS_KEY, or AWS_PROFILE) ({text})"
        )
    return StoreError(f"object store error at {where}: {text}")


_DENIED = (
    "ACCESS_DENIED",
    "ACCESSDENIED",
    "INVALID_ACCESS_KEY",
    "INVALIDACCESSKEY",
    "SIGNATURE_DOES_NOT_MATCH",
    "SIGNATUREDOESNOTMATCH",
    "CREDENTIALS",
    "FORBIDDEN",
    "UNAUTHORIZED",
    "MISSING_AUTHENTICATION",
)


def is_remote(where: object) -> bool:
    return isinstance(where, RemotePath)
