"""Local randomizers, objects in the setting (bottom layer of ``accounting``): :class:`Randomizer` (the
interface; ``(Randomizer,)`` accepts every eps0-LDP randomizer), :class:`KRR` (k-RR, every quantity derived
once in :class:`KrrParams`), :class:`BinaryRR` (k-RR at k = 2), :class:`LaplaceRandomizer` (Balle et al.'s
Laplace on [0, 1]), and the randomizers estimated from support counts (:class:`SupportRandomizer`):
:class:`OUE`, :class:`SUE` (unary encoding), :class:`OLH` (local hashing), :class:`HadamardResponse`,
:class:`SubsetSelection`, whose blanket is derived from their output types (:class:`TypeBlanket`). Each also samples the shuffled reports as counts, estimates the distribution from them and
gives that estimate's exact error; one with finitely many outputs names its output types
(:class:`OutputTypes`, :mod:`~shuffledp.accounting.randomizers.types`) (:mod:`~shuffledp.accounting.randomizers.counts` holds the shared pieces), and
is registered under its ``key`` (:func:`register_randomizer`, :func:`randomizer_class`). Adding one is a module:
docs/adding-an-accountant.md, "Adding a randomizer"."""

from shuffledp.accounting.randomizers.base import (
    Blanket,
    GenericBlanket,
    Randomizer,
    accepted_names,
    amplification_logs,
    check_accepted,
    list_randomizers,
    randomizer_class,
    register_randomizer,
    unregister_randomizer,
)
from shuffledp.accounting.randomizers.counts import ExpectedError
from shuffledp.accounting.randomizers.hadamard import HadamardResponse
from shuffledp.accounting.randomizers.krr import KRR, MAX_K, BinaryRR, KrrBlanket, KrrParams
from shuffledp.accounting.randomizers.laplace import LaplaceBlanket, LaplaceRandomizer
from shuffledp.accounting.randomizers.olh import OLH, best_hash_range, default_hash_range
from shuffledp.accounting.randomizers.oue import OUE
from shuffledp.accounting.randomizers.subset import SubsetSelection, optimal_subset_size
from shuffledp.accounting.randomizers.sue import SUE
from shuffledp.accounting.randomizers.support import SupportRandomizer
from shuffledp.accounting.randomizers.type_blanket import TypeBlanket, types_from_channel
from shuffledp.accounting.randomizers.types import OutputTypes
from shuffledp.accounting.randomizers.unary import UnaryEncoding

__all__ = [
    "Randomizer",
    "Blanket",
    "GenericBlanket",
    "check_accepted",
    "accepted_names",
    "amplification_logs",
    "register_randomizer",
    "unregister_randomizer",
    "randomizer_class",
    "list_randomizers",
    "ExpectedError",
    "OutputTypes",
    "KRR",
    "BinaryRR",
    "KrrParams",
    "KrrBlanket",
    "MAX_K",
    "LaplaceRandomizer",
    "LaplaceBlanket",
    "TypeBlanket",
    "types_from_channel",
    "SupportRandomizer",
    "UnaryEncoding",
    "OUE",
    "SUE",
    "OLH",
    "best_hash_range",
    "default_hash_range",
    "HadamardResponse",
    "SubsetSelection",
    "optimal_subset_size",
]
