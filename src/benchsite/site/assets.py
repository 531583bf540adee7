"""The files a site needs besides its pages: the Vega bundle, the theme's CSS and script, and a
static SVG of every chart.

The Vega bundle (Vega, Vega-Lite and vega-embed from ``vl_convert.javascript_bundle()``, ~900 KB)
is written once per site and loaded by every page as a classic ``<script src>`` — a module
script is blocked on ``file://``. Making it takes seconds, so it is cached per vl-convert
version (in the output folder and the user's cache folder), and made in a process of its own
(:func:`start_vega_bundle`) that runs while the build's first stages use one core. Chart SVGs
are drawn by vl-convert in worker processes while the pages render (:class:`SvgRenderer`), and
named by a hash of their spec, so an unchanged chart is not drawn again on the next build.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterable
from pathlib import Path

import vl_convert

from benchsite.errors import BenchsiteError, PluginError
from benchsite.specs import ChartSpec

ASSETS = "assets"
VEGA_BUNDLE = f"{ASSETS}/vega-{vl_convert.__version__}.js"
MAX_WORKERS = 8  # SVG-drawing processes; each holds a JavaScript runtime (~100 MB)


def start_vega_bundle(out: Path) -> subprocess.Popen[bytes] | None:
    """Start making the Vega bundle into the user's cache, unless the site or the cache has it
    already; :func:`write_vega_bundle` waits for it. Its own process keeps what vl-convert's
    bundler prints on stderr (vl-convert 2 prints each pass) out of the build's output."""
    if (out / VEGA_BUNDLE).exists() or _cached_bundle().exists():
        return None
    _cached_bundle().parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "benchsite.svg_worker", "--bundle", str(_cached_bundle())]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def write_vega_bundle(out: Path, making: subprocess.Popen[bytes] | None = None) -> str:
    """Write the Vega bundle into the site from the user's cache, made there first when
    missing (by ``making``, the process :func:`start_vega_bundle` started); return its path."""
    target = out / VEGA_BUNDLE
    if target.exists():
        return VEGA_BUNDLE
    making = making or start_vega_bundle(out)
    if making is not None:
        _, errors = making.communicate()
        if making.returncode != 0:
            last = errors.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
            raise BenchsiteError(
                f"vl-convert could not make the Vega bundle ({last[0]}); check that "
                f"vl-convert-python is installed and {_cached_bundle().parent} is writable"
            )
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_cached_bundle(), target)
    return VEGA_BUNDLE


def _cached_bundle() -> Path:
    return _cache_dir() / Path(VEGA_BUNDLE).name


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "benchsite"


class SvgRenderer:
    """Draws the static SVG of every chart it is given into the site ``out``, in ``workers``
    processes (:mod:`benchsite.svg_worker`) that run while the build goes on::

        with SvgRenderer(out) as svgs:
            svgs.draw(charts)  # returns at once
            ...
            drawn = svgs.finish()  # waits for every SVG; raises if one could not be drawn

    A process forked from the build (a page worker) hands its charts over with :meth:`send` as
    it makes them, so that their SVGs are drawn while it goes on. A chart given before, or
    whose SVG an earlier build left on disk (same spec, same name), is not drawn again.
    ``paths`` lists every chart's SVG, drawn now or before; ``seconds`` adds up the time the
    workers spent drawing. The workers start with the first chart, or at once
    when ``eager`` (a first build, which will draw every chart: their start-up then
    overlaps the build's first, single-core stages).
    """

    def __init__(self, out: Path, workers: int | None = None, eager: bool = False) -> None:
        self.out = out
        self.eager = eager
        self.workers = workers or min(MAX_WORKERS, os.cpu_count() or 1)
        self.paths: set[str] = set()
        self.drawn = 0
        self._times: list[float] = []  # list.append is atomic: feeders append side by side
        # charts to draw (target file, spec); one None per feeder ends them
        self._waiting: queue.SimpleQueue[tuple[Path, str] | None] = queue.SimpleQueue()
        self._feeders: list[threading.Thread] = []
        self._errors: list[str] = []
        self._stopping = False
        self._drawing = threading.Lock()  # draw() runs in the build's thread and the reader's
        # charts sent from any process of the build (see send), one message at a time, to the
        # reader thread here; a None ends it, and so does the pipe's end (a failed build)
        self._inbox, self._outbox = multiprocessing.Pipe(duplex=False)
        self._sending = multiprocessing.Lock()
        self._reader: threading.Thread | None = None

    def __enter__(self) -> SvgRenderer:
        self._feeders = [
            threading.Thread(target=self._feed, daemon=True) for _ in range(self.workers)
        ]
        self._reader = threading.Thread(target=self._read, daemon=True)
        for thread in [*self._feeders, self._reader]:
            thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopping = exc_info[0] is not None  # a failed build does not wait for its charts
        self._join()

    def draw(self, charts: Iterable[ChartSpec]) -> None:
        """Queue the SVG of every chart in ``charts`` not drawn yet."""
        with self._drawing:
            for chart in charts:
                if chart.svg in self.paths:
                    continue
                self.paths.add(chart.svg)
                target = self.out / chart.svg
                if not target.exists():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    self.drawn += 1
                    self._waiting.put((target, chart.text))

    def send(self, chart: ChartSpec) -> None:
        """Queue ``chart`` from any process of the build, one forked from it too: it goes
        through a pipe to the build's process, which draws it as :meth:`draw` does. A chart
        queued before this process was forked (a finding's, shown by a page) is not sent."""
        if chart.svg in self.paths:
            return
        with self._sending:
            self._outbox.send(chart)

    @property
    def seconds(self) -> float:
        return sum(self._times)

    def finish(self) -> int:
        """Wait for every queued SVG; return how many were drawn."""
        self._join()
        if self._errors:
            raise PluginError(
                f"{len(self._errors)} chart SVG(s) could not be drawn, the first: "
                f"{self._errors[0]}; fix the chart of the plugin that made it"
            )
        return self.drawn

    def _join(self) -> None:
        if self._reader is not None and self._stopping:
            # a page worker killed halfway through a send may hold the lock: no last message;
            # the reader ends when no process can write to the pipe any more
            self._outbox.close()
        elif self._reader is not None:  # every chart sent is in the pipe: the reader takes all
            with self._sending:
                self._outbox.send(None)
            self._reader.join()
            self._inbox.close()
            self._outbox.close()
        self._reader = None
        for _ in self._feeders:
            self._waiting.put(None)
        for feeder in self._feeders:
            feeder.join()
        self._feeders = []

    def _read(self) -> None:
        while True:
            try:
                chart = self._inbox.recv()
            except EOFError:
                return
            if chart is None:
                return
            self.draw([chart])

    def _feed(self) -> None:
        """Hand charts from the queue to one worker process, started with the first chart (a
        build that draws nothing starts none) unless ``eager``, until the end."""
        worker = _start_worker() if self.eager else None
        try:
            for target, spec_json in iter(self._waiting.get, None):
                if self._stopping:
                    continue
                worker = worker or _start_worker()
                answer = _ask(worker, target, spec_json)
                if answer.startswith("ok "):
                    self._times.append(float(answer[3:]))
                else:
                    self._errors.append(f"{target.name}: {answer or 'the SVG worker stopped'}")
                if not answer:  # it died: the next chart gets a fresh one
                    _stop_worker(worker, wait=False)
                    worker = None
        finally:
            if worker is not None:
                _stop_worker(worker, wait=not self._stopping)


def _start_worker() -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "benchsite.svg_worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


def _ask(worker: subprocess.Popen[str], target: Path, spec_json: str) -> str:
    """Send one chart (see :mod:`benchsite.svg_worker`); its answer, empty if the worker died."""
    assert worker.stdin is not None and worker.stdout is not None
    try:
        worker.stdin.write(json.dumps(str(target)) + "\n" + spec_json + "\n")
        worker.stdin.flush()
    except OSError:
        return ""
    return worker.stdout.readline().strip()


def _stop_worker(worker: subprocess.Popen[str], wait: bool) -> None:
    """End a worker: at the end of its input when ``wait``, else at once."""
    try:
        if worker.stdin is not None:
            worker.stdin.close()
        if wait:
            worker.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        pass
    if worker.poll() is None:
        worker.kill()
    worker.wait()
