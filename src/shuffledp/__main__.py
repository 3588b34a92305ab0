"""``python -m shuffledp`` is the same as the ``shuffle-dp`` console script."""

from shuffledp.cli import main

raise SystemExit(main())
