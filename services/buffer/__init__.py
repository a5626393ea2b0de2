"""The buffer stage service: per-scope buffers in a changelog-backed faust table."""
