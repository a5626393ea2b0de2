"""BEAM-128K retrieval check: `python -m bench.retrieval --sets beam` (see bench/retrieval.py).

Kept as its own entry point; the LoCoMo twin is bench/locomo_retrieval.py.
"""

from __future__ import annotations

import sys

from bench.retrieval import main

if __name__ == "__main__":
    sys.argv[1:1] = ["--sets", "beam"]
    main()
