"""Workload plugins: each registers PyTorch workloads to measure."""
