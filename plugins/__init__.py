"""benchsite's built-in plugins, arranged by kind: ``devices/``, ``workloads/``,
``collectors/``, ``analyses/`` and ``pages/``. Each module of a kind folder is loaded exactly like
a third-party plugin, named ``<kind>.<module>`` (``workloads.matmul``), and is written only
against the contract (:mod:`benchsite`, :mod:`benchsite.tables`, :mod:`benchsite.site`) and the
public :mod:`benchsite.toolkit`.
"""
