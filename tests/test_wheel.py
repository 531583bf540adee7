"""The published package works outside an editable install: the sdist holds every source file,
the wheel built from it every package of the engine, the built-in plugins and the theme; installed into a fresh virtual environment it
runs the quick matmul case, builds a site beside the H200 results the package ships, and a
third-party plugin installs against it.

The fresh environment sees this machine's own packages (``--system-site-packages``: torch and
the other dependencies are not downloaded again), so the test checks that its ``benchsite`` is
the wheel's and not an editable install found there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.conftest import TESTS

REPO = TESTS.parent


def pip(*args: str | Path, python: Path | None = None) -> None:
    target = ["--python", str(python)] if python else []
    subprocess.run([sys.executable, "-m", "pip", *target, *map(str, args)], check=True)


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    """The sdist PyPA's ``build`` makes from a clean copy of this repository's files (as a
    fresh clone has them: no egg-info or build folder left by an editable install, which
    setuptools would read), in isolation, as a release would."""
    clean, dist = tmp_path_factory.mktemp("clone"), tmp_path_factory.mktemp("sdist")
    listed = ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"]
    for name in subprocess.run(listed, capture_output=True, check=True, cwd=REPO).stdout.split(
        b"\0"
    ):
        if name and (REPO / name.decode()).is_file():
            (clean / name.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name.decode(), clean / name.decode())
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", dist, clean],
        check=True,
        capture_output=True,
    )
    (built,) = dist.glob("benchsite-*.tar.gz")
    return built


@pytest.fixture(scope="module")
def wheel(sdist, tmp_path_factory) -> Path:
    """The wheel pip builds from that sdist (in isolation), as a user's pip would."""
    dist = tmp_path_factory.mktemp("dist")
    pip("wheel", "--quiet", "--no-deps", "--wheel-dir", dist, sdist)
    (built,) = dist.glob("benchsite-*.whl")
    return built


def shipped_packages() -> set[str]:
    """Every package the wheel must hold: each folder of src/benchsite with an __init__.py,
    and the top-level plugins/ and templates/ (mapped into the package)."""
    engine = {
        init.parent.relative_to(REPO / "src").as_posix()
        for init in (REPO / "src" / "benchsite").rglob("__init__.py")
    }
    return engine | {"benchsite/plugins", "benchsite/templates"}


def source_files(folder: Path) -> list[Path]:
    return [
        path for path in folder.rglob("*") if path.is_file() and "__pycache__" not in path.parts
    ]


def test_the_sdist_holds_every_source_file_the_wheel_is_built_from(sdist):
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for folder in ("src/benchsite", "plugins", "templates"):
        for path in source_files(REPO / folder):
            assert path.relative_to(REPO).as_posix() in names, f"the sdist lacks {path}"
    assert {"pyproject.toml", "README.md"} <= names


def test_the_wheel_holds_every_package_module_and_template(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for package in shipped_packages():
        assert f"{package}/__init__.py" in names, f"the wheel lacks the package {package}"
    for folder, prefix in (
        (REPO / "src" / "benchsite", "benchsite"),
        (REPO / "plugins", "benchsite/plugins"),
        (REPO / "templates", "benchsite/templates"),
    ):
        for path in source_files(folder):
            inside = f"{prefix}/{path.relative_to(folder).as_posix()}"
            assert inside in names, f"the wheel lacks {inside}"


def test_the_installed_wheel_runs_builds_and_takes_a_plugin(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", venv], check=True
    )
    python, command = venv / "bin" / "python", venv / "bin" / "benchsite"
    pip("install", "--quiet", "--no-deps", wheel, python=python)
    where = subprocess.run(
        [python, "-c", "import benchsite.site, benchsite.plugins; print(benchsite.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout
    assert Path(where.strip()).is_relative_to(venv), f"not the wheel's benchsite: {where}"

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BENCHSITE_CONFIG")}

    def benchsite(*args: str) -> str:
        done = subprocess.run(
            [command, *args], capture_output=True, text=True, env=env, cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    store, site = str(tmp_path / "store"), tmp_path / "site"
    ran = benchsite(
        "run", "--quick", "-w", "matmul", "-d", "cpu", "--budget", "0.05", "--results", store
    )
    assert "stored 6 ok, 2 skipped" in ran
    benchsite("build", "--results", store, "--out", str(site), "--reference", "h200")
    assert (site / "workloads" / "matmul.html").is_file() and (
        site / "assets" / "site.css"
    ).is_file()
    # the shipped H200 results travel in the wheel: the CPU-only store is answered with them
    assert "NVIDIA H200 (reference h200, 2026-12)" in (site / "index.html").read_text()

    pip("install", "--quiet", "--no-deps", TESTS / "thirdparty_plugin", python=python)
    assert "plugin: example\n" in benchsite("workloads", "example-saxpy")
