"""Unfinished multipart uploads in an S3 store: what a writer killed mid-upload leaves.

No listing shows them and no reader sees them, but the bucket keeps (and bills) their parts
until they are aborted (or a lifecycle rule does it). pyarrow cannot list them; boto3 can, where
it is installed (``pip install boto3``). ``benchsite store check`` reports them and, with
``--quarantine``, aborts those started more than :data:`MIN_AGE_S` ago (a part of a live
writer takes seconds to upload, never an hour).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from benchsite.errors import StoreError
from benchsite.store.remote import RemotePath, first_line

MIN_AGE_S = 3600.0


@dataclass(frozen=True)
class Upload:
    """One unfinished multipart upload under the store's prefix."""

    key: str
    upload_id: str
    started: datetime

    def age_s(self) -> float:
        return (datetime.now(UTC) - self.started).total_seconds()


def unfinished(root: RemotePath) -> list[Upload] | None:
    """The unfinished uploads under ``root`` (``None`` where they cannot be listed: not S3,
    or boto3 missing)."""
    client = _client(root)
    if client is None:
        return None
    bucket, _, prefix = root.path.partition("/")
    found: list[Upload] = []
    try:
        for page in client.get_paginator("list_multipart_uploads").paginate(
            Bucket=bucket, Prefix=prefix
        ):
            found += [
                Upload(item["Key"], item["UploadId"], item["Initiated"])
                for item in page.get("Uploads", ())
            ]
    except Exception as exc:  # noqa: BLE001 - botocore's errors have no common base worth naming
        raise StoreError(f"cannot list unfinished uploads of {root}: {first_line(exc)}") from None
    return found


def abort_old(root: RemotePath, uploads: list[Upload]) -> int:
    """Abort the uploads older than :data:`MIN_AGE_S`; how many."""
    client = _client(root)
    old = [upload for upload in uploads if upload.age_s() > MIN_AGE_S]
    bucket = root.path.partition("/")[0]
    for upload in old:
        client.abort_multipart_upload(Bucket=bucket, Key=upload.key, UploadId=upload.upload_id)
    return len(old)


def _client(root: RemotePath):  # type: ignore[no-untyped-def] - boto3 is optional, untyped
    if root.scheme != "s3":
        return None
    try:
        import boto3
    except ImportError:
        return None
    return boto3.client("s3")  # AWS_ENDPOINT_URL and credentials from the environment
