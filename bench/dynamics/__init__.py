"""The memory-dynamics benchmark: generated scenarios of memories changing over time, run
against an append-only baseline and with each mechanism switched off (`python -m
bench.dynamics`)."""
