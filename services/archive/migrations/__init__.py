"""The archive's schema, as alembic migrations (``services/archive/schema.py`` runs them).

``env.py`` runs them on the connection ``schema.migrate`` gives it; ``versions/`` holds one
file per revision, numbered (``0001``, ``0002``…), each naming the one before it.
"""
