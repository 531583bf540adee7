"""Bad input, generated (hypothesis): every option of every command, every usage error of every
command, every configuration key, and damaged store parts. Each example must end in one line on
stderr (``error: ...``, besides ``note:`` and ``warning:`` lines), a documented exit status (0,
1, 2), no traceback, and the store and the published site byte for byte as they were.

The commands and their options are read from the typer app itself, so a new option is fuzzed
without touching this file. In-process (``benchsite.cli.app.main``): an example costs
milliseconds, not a start-up. ``BENCHSITE_FUZZ_EXAMPLES`` sets the examples per test (default
25, bounded for CI; ``BENCHSITE_FUZZ_EXAMPLES=2000`` for a long hunt).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import random
import tomllib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.main import get_command

from benchsite.cli import usage
from benchsite.cli.app import app, main
from benchsite.errors import ConfigError
from benchsite.host import config
from benchsite.store import parts as store
from benchsite.testing import complete_row
from tests.conftest import CASEBOOK

EXAMPLES = int(os.environ.get("BENCHSITE_FUZZ_EXAMPLES", "25"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("BENCHSITE_FUZZ_EXAMPLES") is None,  # CI: the same examples
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
NUMBERS = ["nan", "inf", "-inf", "-1", "-0.5", "0", "1e10", "1e308", "-1e308", "9" * 30, "abc"]
NAMES = ["a/b", "../x", "..", ".", "x\nb", "x\x1b[2J", "tab\there", "", " ", "é", "a" * 300]
# paths: {tmp} is the test's folder; a mount point, a file, a missing folder, a full device
PATHS = ["{tmp}/missing/deep", "{tmp}/afile", "/proc", "/sys", "/dev/full", "/", "/proc/nope/x"]
VALUES = NUMBERS + NAMES + PATHS


def _commands(group=None, path=()):  # type: ignore[no-untyped-def] - click's own types
    """(command path, click command) of every command of the app, groups walked."""
    group = group or get_command(app)
    found = []
    for name, command in sorted(getattr(group, "commands", {}).items()):
        if getattr(command, "commands", None):
            found += _commands(command, (*path, name))
        else:
            found.append(((*path, name), command))
    return found


COMMANDS = dict(_commands())
# what each command gets besides the fuzzed option: enough to get past its first checks, never
# enough to measure or build for real (no workload matches; a store missing or holding one run)
BASE = {
    ("run",): ["-p", CASEBOOK, "-w", "no-such-workload", "--results", "{tmp}/store"],
    ("results",): ["--results", "{tmp}/store"],
    ("build",): ["--results", "{tmp}/no-store", "--out", "{tmp}/site"],
    ("serve",): ["--site", "{tmp}/no-site"],
    ("compare",): ["h", "nohost", "--results", "{tmp}/store"],
    ("store", "check"): ["--results", "{tmp}/store"],
    ("new-plugin",): ["fuzzed-plugin", "--out", "{tmp}/new/plugin"],
}


def _fuzzable() -> list[tuple[tuple[str, ...], str]]:
    """(command, option or argument) pairs that take a value: every one the app has."""
    pairs = []
    for path, command in COMMANDS.items():
        for param in command.params:
            if getattr(param, "is_flag", False) or param.name in ("help",):
                continue
            opts = [opt for opt in param.opts if opt.startswith("--")]
            pairs.append((path, opts[0] if opts else f"<{param.name}>"))
    return pairs


FUZZABLE = _fuzzable()


def test_every_command_and_option_is_fuzzed():
    assert {path for path, _ in FUZZABLE} == set(COMMANDS)
    assert set(COMMANDS) <= set(BASE) | {("devices",), ("workloads",), ("plugins",)}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a store of one run, a published site and a file, for every example."""
    tmp = tmp_path_factory.mktemp("fuzz")
    row = complete_row({"workload": "w", "run_id": "r1", "host": "h", "median_s": 0.001})
    store.write_rows(tmp / "store", "h", "r1", [row])
    (tmp / "site").mkdir()
    (tmp / "site" / "index.html").write_text("<p>published</p>")
    (tmp / "site" / "CNAME").write_text("bench.example.org")
    (tmp / "afile").write_text("a file, not a folder")
    return tmp


def snapshot(*folders: Path) -> dict[str, str]:
    """Every file under ``folders`` and its content's hash."""
    return {
        str(path): hashlib.sha256(path.read_bytes()).hexdigest()
        for folder in folders
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.name.startswith(".lock")
    }


def invoke(args: list[str]) -> tuple[int, str, str]:
    """``benchsite ARGS`` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
            code = 0
        except SystemExit as exited:
            code = (
                exited.code if isinstance(exited.code, int) else (0 if exited.code is None else 2)
            )
    return code, out.getvalue(), err.getvalue()


def assert_clean_ending(code: int, out: str, err: str, args: list[str]) -> None:
    """A documented status, no traceback, and an error told in one line."""
    told = f"benchsite {args!r} -> {code}\n{out}\n{err}"
    assert code in (0, 1, 2), told
    assert "Traceback" not in err and "Traceback" not in out, told
    if code == 2:  # one line, besides notes and warnings
        lines = [line for line in err.splitlines() if line.strip()]
        assert len([line for line in lines if line.startswith("error: ")]) == 1, told
        assert all(line.startswith(("error: ", "note: ", "warning: ")) for line in lines), told


@FUZZ
@given(pair=st.sampled_from(FUZZABLE), value=st.sampled_from(VALUES), seed=st.integers(0, 99))
def test_every_option_of_every_command_takes_bad_values_without_a_traceback(
    world, monkeypatch, pair, value, seed
):
    monkeypatch.chdir(world)
    path, option = pair
    value = value.format(tmp=world)
    base = [part.format(tmp=world) for part in BASE.get(path, [])]
    if option.startswith("<"):  # an argument: it replaces the base's first one
        positional = [value] + (base[1:] if base and not base[0].startswith("-") else base)
        args = [*path, *positional]
    else:
        args = [*path, *base, option, value]
    before = snapshot(world / "store", world / "site")
    code, out, err = invoke(args)
    assert_clean_ending(code, out, err, args)
    assert snapshot(world / "store", world / "site") == before, args


# -- usage errors: what click refuses before a command runs ----------------------------------------

# values that are no number of either kind, and those that are no whole number
NOT_NUMBERS = ["abc", "", " ", "1,5", "--", "0x", "1e", "é", "x\n1"]
WRONG_TYPE = {float: NOT_NUMBERS, int: [*NOT_NUMBERS, "1.5", "1e3", "nan", "-inf"]}


def _usage_mistakes(path: tuple[str, ...], command) -> list[list[str]]:  # type: ignore[no-untyped-def]
    """Every kind of usage error of one command: the arguments after its base ones."""
    found = [["--no-such-option"], ["-Z"], ["--no-such-option=1"], ["extra", "arguments", "here"]]
    for param in command.params:
        if param.param_type_name != "option" or param.name == "help":
            continue
        option = next(opt for opt in param.opts if opt.startswith("--"))
        if param.is_flag:
            found.append([f"{option}=yes"])  # a flag given a value
            continue
        found.append([option])  # its value missing
        for bad in WRONG_TYPE.get(usage.declared_type(command, param.name), []):
            found += [[option, bad], [f"{option}={bad}"]]
    return found


# (the command whose --help the line must name, the whole arguments) of every usage error
USAGE_ERRORS = [
    (path, [*path, *BASE.get(path, []), *mistake])
    for path, command in COMMANDS.items()
    for mistake in _usage_mistakes(path, command)
] + [
    ((), ["no-such-command"]),
    ((), ["--no-such-option"]),
    ((), ["--version=1"]),
    (("store",), ["store", "no-such-command"]),
    (("store",), ["store", "--no-such-option"]),
]


def assert_one_usage_line(path: tuple[str, ...], args: list[str], world: Path) -> None:
    """``benchsite ARGS`` is refused in one ``error:`` line naming the command's help, exit 2."""
    args = [arg.format(tmp=world) for arg in args]
    code, out, err = invoke(args)
    told = f"benchsite {args!r} -> {code}\n{out}\n{err}"
    assert code == 2 and out == "", told
    assert err.count("\n") == 1 and err.startswith("error: "), told
    assert f"see `{' '.join(('benchsite', *path))} --help`" in err, told


def test_every_usage_error_of_every_command_is_one_line(world, monkeypatch):
    monkeypatch.chdir(world)
    assert {path for path, _ in USAGE_ERRORS} >= set(COMMANDS)
    for path, args in USAGE_ERRORS:
        assert_one_usage_line(path, args, world)


@FUZZ
@given(
    command=st.sampled_from(sorted(COMMANDS)),
    option=st.from_regex(r"\A--?[a-z][a-z0-9-]{0,20}\Z"),
    value=st.text(max_size=12),
)
def test_generated_unknown_options_and_wrong_values_are_one_line(
    world, monkeypatch, command, option, value
):
    monkeypatch.chdir(world)
    known = {opt for param in COMMANDS[command].params for opt in param.opts}
    if option not in known:  # an option the command does not have, with or without a value
        assert_one_usage_line(command, [*command, *BASE.get(command, []), option], world)
        assert_one_usage_line(command, [*command, *BASE.get(command, []), f"--x{option}=1"], world)
    with contextlib.suppress(ValueError):
        float(value)
        return  # a number: not a value of the wrong type
    for param in COMMANDS[command].params:
        if usage.declared_type(COMMANDS[command], param.name) in WRONG_TYPE:
            args = [*command, *BASE.get(command, []), param.opts[0], value]
            assert_one_usage_line(command, args, world)


# -- the configuration file ----------------------------------------------------------------------

TOML_VALUES = [
    "nan",
    "inf",
    "-inf",
    "-1",
    "0",
    "1e308",
    "3.5",
    '"text"',
    "true",
    "[1, 2]",
    "{ a = 1 }",
    "1979-05-27",
    '""',
]


@FUZZ
@given(
    section=st.sampled_from(["max_batch", "cost.usd_per_hour", "cost", "nosuch", "max_batch.x"]),
    key=st.sampled_from(["cpu_memory_budget_gib", "cpu", "cuda:0", "typo", '"NVIDIA H200"']),
    value=st.sampled_from(TOML_VALUES),
)
def test_every_configuration_key_takes_bad_values_in_one_line(
    tmp_path_factory, section, key, value
):
    import benchsite.plugins.collectors.cost
    import benchsite.plugins.workloads.max_batch  # noqa: F401 - declares [max_batch]

    path = tmp_path_factory.mktemp("config") / "benchsite.toml"
    path.write_text(f"[{section}]\n{key} = {value}\n")
    try:
        config.check(path)
    except ConfigError as error:
        text = str(error)
        assert "\n" not in text and str(path) in text, text
        return
    for number in _numbers(tomllib.loads(path.read_text())):  # accepted: every number sane
        assert number >= 0 and number != float("inf"), path.read_text()


def _numbers(found: object) -> list[float]:
    if isinstance(found, dict):
        return [n for item in found.values() for n in _numbers(item)]
    if isinstance(found, int | float) and not isinstance(found, bool):
        return [float(found)]
    return []


# -- damaged store parts -------------------------------------------------------------------------


def _good_part() -> bytes:
    table = store.to_table([complete_row({"workload": "w", "run_id": "bad", "host": "h"})])
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


@st.composite
def damaged_parts(draw: st.DrawFn) -> bytes:
    """A part file as a bug, a foreign tool or a dying disk leaves it."""
    kind = draw(st.sampled_from(["columns", "types", "foreign", "future", "truncated", "noise"]))
    good = _good_part()
    table = pq.read_table(io.BytesIO(good))
    if kind == "columns":  # some columns missing (the required ones too)
        keep = draw(st.lists(st.sampled_from(table.column_names), min_size=1, unique=True))
        table = table.select(keep)
    elif kind == "types":  # a column of another type
        name = draw(st.sampled_from(table.column_names))
        wrong = draw(
            st.sampled_from(
                [
                    pa.array([1]),
                    pa.array([1.5]),
                    pa.array([True]),
                    pa.array(["text"]),
                    pa.array([[1, 2]]),
                ]
            )
        )
        table = table.set_column(table.column_names.index(name), name, wrong)
    elif kind == "foreign":
        table = pa.table({"x": [1], "y": ["z"]})
    elif kind == "future":
        version = draw(st.sampled_from(["2", "99", "x", "-1", ""]))
        table = table.replace_schema_metadata({"benchsite.schema_version": version})
    if kind == "truncated":
        return good[: draw(st.integers(0, len(good) - 1))]
    if kind == "noise":
        return draw(st.binary(max_size=2000))
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


@FUZZ
@given(part=damaged_parts())
def test_damaged_parts_are_skipped_or_refused_in_one_line(tmp_path_factory, part):
    root = tmp_path_factory.mktemp("damaged") / "store"
    good = complete_row({"workload": "w", "run_id": "r1", "host": "h", "median_s": 0.001})
    store.write_rows(root, "h", "r1", [good])
    folder = store.run_dir(root, "h", "bad")
    folder.mkdir(parents=True)
    (folder / f"part-{random.randrange(16**8):08x}.parquet").write_bytes(part)
    before = snapshot(root)
    for args in (
        ["results", "--results", str(root), "--run", "r1"],
        ["store", "check", "--results", str(root)],
    ):
        code, out, err = invoke(args)
        assert_clean_ending(code, out, err, args)
        assert snapshot(root) == before, args
        if code == 0 and args[0] == "results":
            assert "run r1 on h" in out  # the good run still reads
