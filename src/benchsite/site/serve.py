"""``benchsite serve``: preview a built site on http://127.0.0.1:<port>/ (never on other
interfaces), with the standard library's file server."""

from __future__ import annotations

import functools
import http
import http.server
import os
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from benchsite.errors import BenchsiteError


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site's files (a folder's ``index.html`` for the folder), never a listing of
    a folder nor a hidden file or folder (``.git``, ``.benchsite-files``: 404); logs nothing
    per request."""

    def send_head(self):  # type: ignore[no-untyped-def] - the standard library's signature
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        if any(part.startswith(".") for part in path.split("/") if part):
            self.send_error(http.HTTPStatus.NOT_FOUND, "File not found")
            return None
        return super().send_head()

    def list_directory(self, path: str | os.PathLike[str]):  # type: ignore[no-untyped-def]
        self.send_error(http.HTTPStatus.NOT_FOUND, "File not found")
        return None

    def log_message(self, format: str, *args: object) -> None:
        return


def make_server(site: Path, port: int = 8000) -> http.server.ThreadingHTTPServer:
    """A server for ``site`` bound to 127.0.0.1 (port 0 picks a free one)."""
    if not (Path(site) / "index.html").is_file():
        raise BenchsiteError(f"{site} holds no built site: run `benchsite build --out {site}`")
    handler = functools.partial(QuietHandler, directory=str(site))
    try:
        return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise BenchsiteError(f"cannot listen on 127.0.0.1:{port} ({exc}): pick --port") from exc


def serve_site(site: Path, port: int = 8000, announce: Callable[[str], None] = print) -> None:
    """Serve until Ctrl-C; ``announce`` gets the address to open."""
    server = make_server(site, port)
    announce(f"serving {site} on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
