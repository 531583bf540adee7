"""Distributed cases: one launch per device group (``launch``), one process per rank
(``rank``), the timing of a group (``sampling``) and the spread over machines (``multinode``).
"""
