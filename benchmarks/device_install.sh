set -x
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site ../.whl/*.whl && export PYTHONPATH=/tmp/site
python3 -c "import setuptools; print('setuptools', setuptools.__version__)"
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -3 || true
python3 -c "import benchsite.plugins" 2>/dev/null || { sed -i 's/^license = "MIT"/license = {text = "MIT"}/' pyproject.toml; python3 -m pip install -q --no-deps --no-build-isolation . 2>&1 | tail -3; }
set +x
python3 -c "import benchsite, benchsite.plugins; print('benchsite at', benchsite.__file__)"
