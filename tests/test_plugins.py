"""Plugin discovery from all three places, isolation of broken plugins, duplicate names."""

from __future__ import annotations

import jinja2
import pytest

from benchsite.errors import PluginError
from benchsite.host import registry
from tests.conftest import TESTS


def test_builtins_are_discovered_as_plugins(benchsite_plugins):
    plugins = benchsite_plugins()
    workloads = registry.workloads(plugins)
    assert {"matmul", "mlp-train"} <= set(workloads)
    source = plugins.infos[workloads["matmul"].plugin].source
    assert source == "builtin"
    assert "cpu" in registry.devices(plugins)


def test_plugin_file_given_on_the_command_line(benchsite_plugins):
    plugins = benchsite_plugins(str(TESTS / "plugins" / "casebook.py"))
    workloads = registry.workloads(plugins)
    assert workloads["case-raise"].plugin == "casebook"
    assert plugins.infos["casebook"].hooks == ("register_workloads",)


def test_plugin_folder_loads_every_module_and_reports_the_broken_one(benchsite_plugins):
    plugins = benchsite_plugins(str(TESTS / "plugins"))
    assert "broken_import" in {info.name for info in plugins.load_errors}
    error = plugins.infos["broken_import"].error
    assert "ImportError: this plugin is broken on purpose" in error
    # the folder's other plugins still load; the duplicate among them is caught on collection
    assert "casebook" in plugins.infos and not plugins.infos["casebook"].error


def test_broken_plugin_is_fatal_when_strict(benchsite_plugins):
    with pytest.raises(PluginError, match="broken_import"):
        benchsite_plugins(str(TESTS / "plugins" / "broken_import.py"), strict=True)


def test_duplicate_workload_names_are_an_error_naming_both(benchsite_plugins):
    plugins = benchsite_plugins(str(TESTS / "plugins" / "duplicate_matmul.py"))
    with pytest.raises(PluginError) as caught:
        registry.workloads(plugins)
    message = str(caught.value)
    assert "'matmul'" in message and "duplicate_matmul" in message and "workloads.matmul" in message


def test_module_name_given_on_the_command_line(benchsite_plugins, monkeypatch):
    monkeypatch.syspath_prepend(str(TESTS / "plugins"))
    plugins = benchsite_plugins("casebook")
    assert "case-sleep" in registry.workloads(plugins)


def test_missing_plugin_file_is_one_clear_error(benchsite_plugins):
    with pytest.raises(PluginError, match="does not exist"):
        benchsite_plugins("no/such/plugin.py")


def test_complete_row_fills_the_axis_a_run_would_store():
    from benchsite.testing import complete_row

    row = complete_row({"workload": "matmul", "params": {"size": 64}}, axis="size")
    assert row["axis"] == "size" and row["axis_value"] == 64.0
    assert complete_row({"workload": "w", "params": {"n": 1}}).get("axis") is None  # none given


def test_an_error_inside_a_library_also_names_the_callers_line():
    from benchsite.errors import describe_exception

    def my_analysis():
        import pandas as pd

        return pd.DataFrame().ok

    try:
        my_analysis()
    except AttributeError as exc:
        text = describe_exception(exc)
    assert text.startswith("AttributeError: 'DataFrame' object has no attribute 'ok' (")
    assert text.endswith(f", from test_plugins.py:{my_analysis.__code__.co_firstlineno + 3})")


ISOLATION = {
    "first": """
@hookimpl
def prepare_jinja_env(env):
    env.calls.append("first")
""",
    "raises": """
@hookimpl
def prepare_jinja_env(env):
    env.calls.append("raises")
    raise RuntimeError("boom")
""",
    "wrapping": """
@hookimpl(wrapper=True)
def prepare_jinja_env(env):
    env.calls.append("before")
    result = yield
    env.calls.append("after")
    return result
""",
}
RENAMED = """
@hookimpl(specname="prepare_jinja_env")
def add_filters(env):
    env.calls.append("renamed")
"""


def _plugin_folder(tmp_path, plugins):
    for name, body in plugins.items():
        (tmp_path / f"{name}.py").write_text("from benchsite import hookimpl\n" + body)
    return str(tmp_path)


class _Env(jinja2.Environment):
    """A real Jinja environment that records which implementations ran."""

    def __init__(self):
        super().__init__()
        self.calls = []


def _calls(plugins, names):
    env = _Env()
    list(plugins.call_each("prepare_jinja_env", {"env": env}))
    return [call for call in env.calls if call in names]


def test_each_implementation_is_called_alone_inside_the_wrappers(
    benchsite_plugins, tmp_path, capsys
):
    """Failure isolation through pluggy's public API: one call per implementation, newest
    registered first (a folder loads in name order), the wrappers around each call (the
    built-ins' too), and the one that raises noted by name and skipped."""
    plugins = benchsite_plugins(_plugin_folder(tmp_path, ISOLATION))
    env = _Env()
    list(plugins.call_each("prepare_jinja_env", {"env": env}))
    implementations = plugins.hook.prepare_jinja_env.get_hookimpls()
    assert env.calls.count("before") == len(implementations) - 1  # each but the wrapper
    assert env.calls.count("after") == len(implementations) - 2  # each but the one raising
    ours = [index for index, call in enumerate(env.calls) if call in {"raises", "first"}]
    assert [env.calls[i] for i in ours] == ["raises", "first"]
    assert all(env.calls[i - 1] == "before" for i in ours)
    assert env.calls[ours[0] + 1] == "before" and env.calls[ours[1] + 1] == "after"
    assert [info.name for info in plugins.load_errors] == ["raises"]
    assert "prepare_jinja_env raised RuntimeError: boom (raises.py:6)" in capsys.readouterr().err


def test_an_implementation_named_through_specname_is_called_once(benchsite_plugins, tmp_path):
    plugins = benchsite_plugins(_plugin_folder(tmp_path, {**ISOLATION, "renamed": RENAMED}))
    assert _calls(plugins, {"first", "raises", "renamed"}) == ["renamed", "raises", "first"]


def test_an_implementation_that_raises_is_fatal_when_strict(benchsite_plugins, tmp_path):
    plugins = benchsite_plugins(_plugin_folder(tmp_path, ISOLATION), strict=True)
    with pytest.raises(PluginError, match=r"plugin raises .*prepare_jinja_env raised"):
        list(plugins.call_each("prepare_jinja_env", {"env": _Env()}))
