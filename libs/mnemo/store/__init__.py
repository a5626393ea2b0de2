"""Persistence: Postgres + pgvector through SQLAlchemy 2 (async, psycopg 3)."""
