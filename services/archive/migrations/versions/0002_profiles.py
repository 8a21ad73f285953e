"""Profiles (services/archive/profiles.py): profiles, their keys and link codes, the
results applied (once per table id), each profile's history, and Daily Rack entries.

Revision ID: 0002
Revises: 0001

Only new tables: the release before this one runs on as it did (docs/archive.md,
*Migrations*). Every table of a profile's refers to it ``ON DELETE CASCADE``; ``forget``
deletes from each explicitly too (SQLite enforces foreign keys only when asked).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def _profile_id() -> sa.Column[str]:
    return sa.Column(
        "profile_id",
        sa.Text(),
        sa.ForeignKey("profiles.id", ondelete="CASCADE"),
        nullable=False,
    )


def upgrade() -> None:
    op.create_table(
        "profiles",
        sa.Column("id", sa.Text(), primary_key=True),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("public", sa.Boolean(), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.Column("mu", sa.Double(), nullable=False),
        sa.Column("sigma", sa.Double(), nullable=False),
        # round(60 mu) and sigma > the threshold, as of the last rated match: the
        # leaderboard's index reads them (services/profiles/ratings.py)
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("provisional", sa.Boolean(), nullable=False),
        sa.Column("stats", sa.Text(), nullable=False),  # JSON (services/profiles/stats.py)
    )
    where = sa.text("public AND NOT provisional")
    op.create_index(
        "profiles_leaderboard",
        "profiles",
        [sa.text("rating DESC"), "id"],
        postgresql_where=where,
        sqlite_where=where,
    )
    op.create_table(
        "profile_keys",
        sa.Column("key_hash", sa.LargeBinary(), primary_key=True),  # sha256 of the key
        _profile_id(),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
    )
    op.create_index("profile_keys_profile", "profile_keys", ["profile_id"])
    op.create_table(
        "link_codes",
        sa.Column("code_hash", sa.LargeBinary(), primary_key=True),  # sha256 of the code
        _profile_id(),
        sa.Column("expires_ms", sa.BigInteger(), nullable=False),
    )
    op.create_index("link_codes_profile", "link_codes", ["profile_id"])
    op.create_index("link_codes_expires", "link_codes", ["expires_ms"])
    op.create_table(
        "applied_results",  # one row per table id: a match's result is applied once
        sa.Column("table_id", sa.Text(), primary_key=True),
        sa.Column("applied_ms", sa.BigInteger(), nullable=False),
    )
    op.create_table(
        "profile_history",  # the last 50 matches of each profile
        _profile_id(),
        sa.Column("table_id", sa.Text(), nullable=False),
        sa.Column("finished_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("players", sa.Text(), nullable=False),  # JSON: [{seat, name, score, bot}]
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("place", sa.Integer(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("rating_before", sa.Integer(), nullable=True),
        sa.Column("rating_after", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("profile_id", "table_id"),
    )
    op.create_index("profile_history_newest", "profile_history", ["profile_id", "finished_at_ms"])
    op.create_table(
        "daily_entries",  # one per profile and day
        sa.Column("day", sa.Text(), nullable=False),  # YYYY-MM-DD (UTC)
        _profile_id(),
        sa.Column("started_ms", sa.BigInteger(), nullable=False),
        sa.Column("finished", sa.Boolean(), nullable=False),
        sa.Column("table_id", sa.Text(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("own_turns", sa.Integer(), nullable=False),
        sa.Column("won", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("day", "profile_id"),
    )
    op.create_index(
        "daily_entries_board",
        "daily_entries",
        ["day", sa.text("score DESC"), "own_turns"],
        postgresql_where=sa.text("finished"),
        sqlite_where=sa.text("finished"),
    )
    op.create_index("daily_entries_profile", "daily_entries", ["profile_id"])


def downgrade() -> None:
    for table in ("daily_entries", "profile_history", "applied_results", "link_codes"):
        op.drop_table(table)
    op.drop_table("profile_keys")
    op.drop_table("profiles")
