"""One migration per file (alembic does not read this one); docs/archive.md, *Migrations*."""
