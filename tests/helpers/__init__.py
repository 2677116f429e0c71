"""What several test modules share, by concern: where things are (`paths`), tiny and shipped packs
(`packs`), trees written on disk (`trees`), git (`git`), the report schema (`reports`), result cache
entries (`cache`) and what the hostile-tree tests measure (`measurements`). `conftest.py` holds only
pytest fixtures and hooks."""
