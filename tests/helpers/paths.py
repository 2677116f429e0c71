"""Where the repository keeps what the tests read."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SHIPPED_PACK = "pytorch-2.x"
SHIPPED_PACK_DIR = REPO_ROOT / "rulepacks" / SHIPPED_PACK
FIXTURES = SHIPPED_PACK_DIR / "fixtures"
