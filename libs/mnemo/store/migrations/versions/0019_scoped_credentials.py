"""Scoped credentials and the built-in OAuth server (issue 40).

API keys may be read-only and bound to one user_id. `oauth_clients` holds the clients
registered with the built-in authorization server; `oauth_tokens` its pending consents,
authorization codes, access and refresh tokens, each stored as a SHA-256 hash.

Revision ID: 0019
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "api_keys", sa.Column("writable", sa.Boolean(), nullable=False, server_default="true")
    )
    op.add_column("api_keys", sa.Column("user_id", sa.String(), nullable=True))
    op.create_table(
        "oauth_clients",
        sa.Column("client_id", sa.String(), primary_key=True),
        sa.Column("info", postgresql.JSONB(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "oauth_tokens",
        sa.Column("token_hash", sa.String(), primary_key=True),
        sa.Column("kind", sa.String(), nullable=False),  # consent|code|access|refresh
        sa.Column("client_id", sa.String(), nullable=False),
        sa.Column("family", sa.String(), nullable=False),  # one consent's tokens
        sa.Column("project", sa.String(), nullable=True),
        sa.Column("writable", sa.Boolean(), nullable=False, server_default="false"),
        sa.Column("user_id", sa.String(), nullable=True),
        sa.Column("scopes", postgresql.ARRAY(sa.String()), nullable=False),
        sa.Column("resource", sa.String(), nullable=True),
        sa.Column("data", postgresql.JSONB(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("oauth_tokens_family", "oauth_tokens", ["family"])


def downgrade() -> None:
    op.drop_table("oauth_tokens")
    op.drop_table("oauth_clients")
    op.drop_column("api_keys", "user_id")
    op.drop_column("api_keys", "writable")
