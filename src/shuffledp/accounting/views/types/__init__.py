"""Views over a randomizer's output types (any randomizer with finitely many outputs): the pair of one user
hidden among multinomial counts, the weak adversary's view over the types, and the type counts of explicit
datasets (docs/weak-adversary-types.md)."""
