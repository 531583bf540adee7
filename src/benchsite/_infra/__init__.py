"""Private infrastructure every stage shares, one of each: the file lock, the atomic
write, the signal mask, the process pool and the count of usable cores. Not a public API.
"""
