"""What the built-in plugins share, in one place: for analyses and pages, building and wording
findings (:mod:`.findings`), their charts (:mod:`.charts`) and the pieces several pages render
(:mod:`.pages`); for workloads, the training step and precision rules (:mod:`.steps`,
:mod:`.precision`), the models (:mod:`.models`), distributed set-up (:mod:`.parallel`); for
collectors and devices, a process' peak memory (:mod:`.memory`) and the comparability
fingerprint (:mod:`.fingerprint`). Not a plugin (the leading
underscore keeps it out of plugin discovery) and not a public API: a third-party plugin uses
:mod:`benchsite`, :mod:`benchsite.tables` and :mod:`benchsite.site` instead."""
