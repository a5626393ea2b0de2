"""The `mnemo` command line: serve, keys, add/search/runs, import/export."""
