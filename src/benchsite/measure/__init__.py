"""Measuring: plan workload x parameters x device, run each case in a worker process, time
it (warm-up, samples, stationarity) and turn what happened into an outcome row.

Imports nothing of ``benchsite.site`` or ``benchsite.tables``.
"""
