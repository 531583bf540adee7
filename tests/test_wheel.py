"""The published package works outside an editable install: the sdist holds every source file,
the wheel built from it every package of the engine, the built-in plugins and the theme; installed into a fresh virtual environment it
runs the quick matmul case, builds a site beside the H200 results the package ships, and a
third-party plugin installs against it.

The fresh environment sees the packages of the interpreter running the tests (a ``.pth`` file
lists its site-packages folders: torch and the other dependencies are not downloaded again),
inside a virtual environment or outside one; the test checks that its ``benchsite`` is the
wheel's and not an editable install found there. ``BENCHSITE_TEST_WHEEL`` names a wheel to test
instead of building one (the test of this file run from inside a fresh venv passes its own)."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.conftest import TESTS

REPO = TESTS.parent


def run(*command: str | Path, **options: object) -> str:
    """Run a command; on failure the assertion shows its stderr and stdout."""
    done = subprocess.run(list(map(str, command)), capture_output=True, text=True, **options)
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stderr}{done.stdout}"
    return done.stdout


def pip(*args: str | Path, python: Path | None = None) -> None:
    target = ["--python", str(python)] if python else []
    run(sys.executable, "-m", "pip", *target, *args)


def install(package: str | Path, python: Path) -> None:
    """Install ``package`` into the venv of ``python`` even where the venv sees it already
    (through :func:`fresh_venv`'s parent folders): its own copy, found first."""
    pip("install", "--quiet", "--no-deps", "--ignore-installed", package, python=python)


def fresh_venv(folder: Path) -> Path:
    """A new virtual environment that sees this interpreter's packages after its own, and its
    Python. Made from the base interpreter, inside a venv or not: with
    ``--system-site-packages`` from a venv it would see the base interpreter's packages
    instead of the venv's, where a README-following user has the dependencies."""
    run(sys._base_executable, "-m", "venv", "--without-pip", folder)
    python = folder / "bin" / "python"
    child_site = Path(run(python, "-c", "import site; print(site.getsitepackages()[0])").strip())
    parents = [p for p in site.getsitepackages() if Path(p).is_dir()]
    # each folder as the site module adds its own: with the .pth files in it (a venv's own,
    # like this one, lists its parent's folders)
    lines = [f"import site; site.addsitedir({p!r})\n" for p in parents]
    (child_site / "_parent_packages.pth").write_text("".join(lines))
    seen = run(python, "-c", "import sys; print('\\n'.join(sys.path))").splitlines()
    assert set(parents) <= set(seen), f"the fresh venv does not see {parents}: {seen}"
    return python


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    if os.environ.get("BENCHSITE_TEST_WHEEL"):
        pytest.skip("testing the wheel BENCHSITE_TEST_WHEEL names, not a fresh build")
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
    run(sys.executable, "-m", "build", "--sdist", "--outdir", dist, clean)
    (built,) = dist.glob("benchsite-*.tar.gz")
    return built


@pytest.fixture(scope="module")
def wheel(request, tmp_path_factory) -> Path:
    """The wheel pip builds from that sdist (in isolation), as a user's pip would, or the one
    ``BENCHSITE_TEST_WHEEL`` names."""
    if given := os.environ.get("BENCHSITE_TEST_WHEEL"):
        return Path(given)
    dist = tmp_path_factory.mktemp("dist")
    pip("wheel", "--quiet", "--no-deps", "--wheel-dir", dist, request.getfixturevalue("sdist"))
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


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> tuple[Path, Path]:
    """A fresh venv (:func:`fresh_venv`) with the wheel installed: (its python, its folder)."""
    folder = tmp_path_factory.mktemp("installed")
    python = fresh_venv(folder / "venv")
    install(wheel, python)
    return python, folder


def installed_benchsite(installed: tuple[Path, Path], *args: str) -> str:
    python, folder = installed
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BENCHSITE_CONFIG")}
    return run(python.parent / "benchsite", *args, env=env, cwd=folder)


def test_the_installed_wheel_is_the_benchsite_imported(installed):
    python, folder = installed
    where = run(
        python,
        "-c",
        "import benchsite.site, benchsite.plugins; print(benchsite.__file__)",
        cwd=folder,
    )
    assert Path(where.strip()).is_relative_to(folder / "venv"), f"not the wheel's: {where}"


@pytest.mark.slow
def test_the_installed_wheel_runs_and_builds(installed, tmp_path):
    store, site = str(tmp_path / "store"), tmp_path / "site"
    ran = installed_benchsite(
        installed,
        "run",
        "--quick",
        "-w",
        "matmul",
        "-d",
        "cpu",
        "--budget",
        "0.05",
        "--rounds",
        "1",
        "--results",
        store,
    )
    assert "stored 6 ok, 2 skipped" in ran
    installed_benchsite(
        installed, "build", "--results", store, "--out", str(site), "--reference", "h200"
    )
    assert (site / "workloads" / "matmul.html").is_file() and (
        site / "assets" / "site.css"
    ).is_file()
    # the shipped H200 results travel in the wheel: the CPU-only store is answered with them
    assert "NVIDIA H200 (reference h200, 2026-12)" in (site / "index.html").read_text()


def test_the_installed_wheel_takes_a_plugin(installed):
    install(TESTS / "thirdparty_plugin", installed[0])
    assert "plugin: example\n" in installed_benchsite(installed, "workloads", "example-saxpy")


@pytest.mark.slow
def test_the_wheel_tests_pass_from_inside_a_fresh_venv(wheel, installed):
    """The README's test command from inside a virtual environment (as the README suggests):
    this file's install test, run by the Python of the fresh venv the wheel is installed in
    (:func:`installed`), makes its own venv inside that one, which must see the outer venv's
    packages (:func:`fresh_venv` checks it)."""
    python, _ = installed
    env = {**os.environ, "BENCHSITE_TEST_WHEEL": str(wheel)}
    env.pop("PYTHONPATH", None)
    ran = run(
        python,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-n",
        "0",
        "-q",
        "-k",
        "is_the_benchsite_imported",
        "--rootdir",
        REPO,
        REPO / "tests" / "test_wheel.py",
        env=env,
        cwd=REPO,  # as scripts/test runs it: `python -m pytest` imports tests.conftest from here
    )
    assert "1 passed" in ran, ran
