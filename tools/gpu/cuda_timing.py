"""CUDA-event timing shared by the GPU benchmark scripts of this folder."""
import torch


def warm_and_time_once_ms(fn):
    """Runs `fn` once to warm it up (library heuristics, the allocator, autotuning), then times one
    more call with CUDA events: its milliseconds, at least 1 µs. The callers size their timed runs
    by it."""
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    torch.cuda.synchronize()
    return max(start.elapsed_time(end), 1e-3)
