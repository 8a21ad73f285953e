"""alembic's environment: the migrations, run on the connection ``schema.migrate`` opened.

No engine is made here and no URL read: ``rackem migrate`` (services/archive/schema.py)
opens the connection, takes the lock that keeps a second migration waiting, and hands it
over in ``config.attributes["connection"]`` inside its own transaction.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection


def run() -> None:
    connection = context.config.attributes.get("connection")
    if not isinstance(connection, Connection):
        raise RuntimeError("run the archive's migrations with `rackem migrate`")
    context.configure(connection=connection, target_metadata=None)
    with context.begin_transaction():
        context.run_migrations()


run()
