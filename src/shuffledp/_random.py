"""Random streams: one ``numpy.random.Generator`` per job, derived from (seed, job identity).

A workflow job never shares a stream with another job, so results do not depend on the order in
which jobs run or on ``--cores``. The identity is hashed with SHA-256 (stable across processes and
Python versions, unlike ``hash``) into the ``spawn_key`` of a ``SeedSequence``.
"""

from __future__ import annotations

import hashlib

import numpy as np

from shuffledp._validation import check_integer

__all__ = ["job_rng", "job_seed_sequence"]


def job_seed_sequence(seed: int, *identity) -> np.random.SeedSequence:
    """Return the ``SeedSequence`` for job ``identity`` under the root ``seed``.

    ``identity`` is any sequence of values with a stable ``str`` (names, numbers); the same
    (seed, identity) always gives the same stream and different identities give independent streams.
    """
    seed = check_integer(seed, "seed", low=0)
    text = "\x1f".join(str(part) for part in identity).encode("utf-8")
    digest = hashlib.sha256(text).digest()
    spawn_key = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    return np.random.SeedSequence(entropy=seed, spawn_key=spawn_key)


def job_rng(seed: int, *identity) -> np.random.Generator:
    """Return a fresh ``numpy.random.Generator`` for job ``identity`` (see :func:`job_seed_sequence`)."""
    return np.random.default_rng(job_seed_sequence(seed, *identity))
