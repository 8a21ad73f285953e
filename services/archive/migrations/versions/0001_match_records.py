"""match_records: one row per finished match (services/archive/records.py).

Revision ID: 0001
Revises: (none)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "match_records",
        sa.Column("table_id", sa.Text(), primary_key=True),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("finished_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("archived_at_ms", sa.BigInteger(), nullable=False),
        # the rackem-match/1 log, as services/archive/codec.py packed it
        sa.Column("encoding", sa.Text(), nullable=False),
        sa.Column("log", sa.LargeBinary(), nullable=False),
    )
    # retention: purge deletes by finish time
    op.create_index("match_records_finished_at", "match_records", ["finished_at_ms"])
    if op.get_bind().dialect.name == "postgresql":
        # Already compressed (zlib): TOAST need not try pglz on it again.
        op.execute("ALTER TABLE match_records ALTER COLUMN log SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.drop_index("match_records_finished_at", table_name="match_records")
    op.drop_table("match_records")
