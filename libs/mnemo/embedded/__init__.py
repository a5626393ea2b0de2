"""The embedded transport: the Postgres bus runner, its workers, ticker and worker processes."""
