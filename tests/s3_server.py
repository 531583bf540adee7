"""A real S3-compatible server on 127.0.0.1 for the remote-store tests: moto's server, run as
its own process (``python tests/s3_server.py PORT_FILE``), writing its port to PORT_FILE.

One correction of moto's replies: moto names the root element of the CompleteMultipartUpload
reply ``CompleteMultipartUploadResponse`` where S3 names it ``CompleteMultipartUploadResult``,
and the AWS SDK inside pyarrow reads any other root as an error embedded in a 200 reply (its
check for S3's documented failure mode), so every multipart upload would fail against moto
while it works against S3. The server renames that element; the client is untouched.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server

WRONG = b"CompleteMultipartUploadResponse"
RIGHT = b"CompleteMultipartUploadResult"


class S3Replies:
    """WSGI middleware: moto's app with the multipart completion reply named as S3 names it."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        if "uploadId" not in environ.get("QUERY_STRING", "") or environ["REQUEST_METHOD"] != "POST":
            return self.app(environ, start_response)
        captured: list[Any] = []
        body = b"".join(self.app(environ, lambda *args: captured.append(args)))
        body = body.replace(WRONG, RIGHT)
        status, headers = captured[0][:2]
        headers = [(k, str(len(body)) if k.lower() == "content-length" else v) for k, v in headers]
        start_response(status, headers)
        return [body]


def main(port_file: str) -> None:
    app = S3Replies(DomainDispatcherApplication(create_backend_app))
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=MotoRequestHandler)
    Path(port_file).write_text(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1])
