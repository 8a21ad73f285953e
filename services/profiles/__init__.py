"""Profiles: players who come back, without a password or an e-mail (docs/profiles.md).

``keys`` makes and hashes the secrets (a profile's keys, its link codes, its id);
``ratings`` rates a finished match (OpenSkill's Plackett-Luce); ``stats`` keeps a
profile's counts per player count. The store itself is the archive's
(``services/archive/profiles.py``, ``open_profiles``).
"""
