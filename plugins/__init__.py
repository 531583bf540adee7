"""benchsite's built-in plugins, arranged by kind: ``devices/``, ``workloads/``,
``collectors/``, ``analyses/`` and ``pages/``. Each module of a kind folder is loaded exactly like
a third-party plugin, named ``<kind>.<module>`` (``workloads.matmul``). ``_shared/`` holds the
code the built-ins share; nothing in it is a plugin.
"""
