"""Pipeline steps: pure async functions over a batch, given a dependency bundle."""
