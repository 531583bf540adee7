"""Device plugins: each finds one kind of device (CPU, CUDA GPUs, MPS)."""
