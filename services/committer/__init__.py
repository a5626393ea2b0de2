"""The committer stage service: drafts -> Postgres (idempotent); run-status -> runs table."""
