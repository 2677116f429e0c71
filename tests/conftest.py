from __future__ import annotations

from pathlib import Path

import pytest
from air.packs import Pack, load_pack

FIXTURES = Path(__file__).parent.parent / "rulepacks" / "pytorch-2.x" / "fixtures"


@pytest.fixture(scope="session")
def pack() -> Pack:
    return load_pack("pytorch-2.x")
