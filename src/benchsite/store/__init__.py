"""The Parquet store: the parts of a run (schema, write, compact, read), object stores,
the check of a store, resuming a run and the fault points the tests use.

Imports nothing of ``benchsite.site`` or ``benchsite.tables``.
"""
