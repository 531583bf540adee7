"""Private infrastructure every stage shares, one of each: the file lock (:mod:`.lock`), the
atomic write (:mod:`.atomic`), the signal mask (:mod:`.signals`), the process pool
(:mod:`.pool`), the count of usable cores (:mod:`.cores`), a case's statuses and which of them
failed (:mod:`.status`), and the first line of an error (:mod:`.text`). It imports no other
part of benchsite. Not a public API: plugins use :mod:`benchsite.toolkit`.
"""
