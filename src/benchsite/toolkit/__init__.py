"""The plugin toolkit: public helpers for plugin authors, used by the built-ins and third-party
plugins alike. **It may change between minor versions** (as ``datasette.utils`` may): pin
benchsite's minor version if you depend on it; the hooks and records of
:mod:`benchsite.hookspecs` and :mod:`benchsite.records` are the stable contract.

- analyses and pages: building and wording findings (:mod:`.findings`), their charts
  (:mod:`.charts`), the pieces several pages render (:mod:`.pages`);
- workloads: the training and inference steps and their precision rules (:mod:`.steps`,
  :mod:`.precision`), the models (:mod:`.models`), distributed set-up (:mod:`.parallel`);
- collectors and devices: a process' peak memory (:mod:`.memory`), the comparability
  fingerprint (:mod:`.fingerprint`) and the cores this process may use (:mod:`.machine`).
"""
