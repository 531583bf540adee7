"""Collector plugins: each wraps a measurement and records metrics."""
