"""The readiness badge: a shields.io endpoint (https://shields.io/badges/endpoint-badge), for a
CI dashboard or a README."""

from __future__ import annotations

import json

from air.printable import printable
from air.results import Report

COLOURS = ((90.0, "brightgreen"), (75.0, "green"), (50.0, "yellow"), (25.0, "orange"), (0.0, "red"))


def render_badge(report: Report) -> str:
    colour = next(name for bound, name in COLOURS if report.readiness >= bound)
    badge = {
        "schemaVersion": 1,
        "label": f"{printable(report.pack.framework_name)} readiness",
        "message": f"{report.readiness:.1f}%",
        "color": colour,
    }
    return json.dumps(badge, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
