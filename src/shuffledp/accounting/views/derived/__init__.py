"""Everything a view's outcomes determine, derived once for every view.

A view (:mod:`shuffledp.accounting.views.base`) only yields its outcomes -- chunks of (log P, log Q) -- and a
certified bound on the mass it leaves out. These modules turn that stream into:

* :mod:`~shuffledp.accounting.views.derived.delta` -- delta for many epsilons in one pass, and epsilon for a
  delta through the one search (:mod:`shuffledp.accounting.numerics.search`);
* :mod:`~shuffledp.accounting.views.derived.pld` -- the binned privacy loss distribution (pessimistic: losses
  rounded up, left-out mass to infinity; optimistic: rounded down, left-out mass dropped), both directions,
  with subsampling, as our dense PLD (composed like dp_accounting) or as a dp_accounting PLD;
* :mod:`~shuffledp.accounting.views.derived.rdp` -- the Renyi moments, the left-out mass bounded through
  the view's largest privacy loss (orders it cannot certify are refused);
* :mod:`~shuffledp.accounting.views.derived.tail` -- the certified Chernoff bound on the composed delta
  (each round's log-space PLD as a :class:`~shuffledp.accounting.numerics.composed_tail.TailRound`).

Fast exact sums of a view (the split-pair sums, the weak rows) override these as methods of the view; each
override is held to the generic value of its own stream by tests/accounting/test_view_overrides.py.
"""
