"""CPU stand-in for CuPy, used ONLY when running a peer's code that does ``import cupy as cp``.

Su, Cheng & Wang's public repository (Optimal-amplification-bound/Decomposition-Based-Optimal-Bounds-
for-Shuffle-DP, amplification_bounds.py) uses CuPy for its FFT convolution. The names it calls are
``cp.asarray``, ``cp.pad``, ``cp.fft.fft``, ``cp.fft.ifft``, ``cp.maximum``, ``cp.sum``, ``cp.linspace``
and ``ndarray.item()``; numpy provides each with the same semantics (CuPy mirrors numpy's API), so this
module re-exports numpy. It is put on ``sys.path`` by ``benchmarks/bench_peers_k3plus.py`` only while
importing the peer; nothing here is part of the ``shuffledp`` package, and none of the peer's code is
copied into this repository.
"""

from numpy import *  # noqa: F403  (CuPy mirrors numpy's namespace)
from numpy import fft  # noqa: F401  (cp.fft.fft / cp.fft.ifft)


def asnumpy(array):
    """CuPy's device-to-host copy; on the CPU the array is already a numpy array."""
    return asarray(array)  # noqa: F405
