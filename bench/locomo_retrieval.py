"""LoCoMo dev retrieval check: `python -m bench.retrieval --sets locomo` (see bench/retrieval.py).

The twin of bench/beam_retrieval.py.
"""

from __future__ import annotations

import sys

from bench.retrieval import main

if __name__ == "__main__":
    sys.argv[1:1] = ["--sets", "locomo"]
    main()
