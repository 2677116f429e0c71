"""The summary a check prints: readiness and coverage, each section's score grouped by tier, and
the fixes that gain the most. Coloured only for a terminal.

Text from the report passes through `air.printable` before any colour is added, so nothing
from the analysed tree can carry a terminal control.
"""

from __future__ import annotations

from collections.abc import Callable

import click

from air.printable import printable
from air.results import Report, SectionResult
from air.scoring.fixes import fix_first

WIDTH = 76  # inside the box, which is 80 columns wide
TOP_FIXES = 5
GOOD, FAIR = 80.0, 50.0  # percentages shown green, yellow; below FAIR, red
UNICODE_FRAME = "╭╮╰╯─│├┤"
ASCII_FRAME = "++++-|++"


def render_summary(report: Report, colour: bool = False, unicode: bool = True) -> str:
    """The summary box, ending with a newline; in ASCII alone unless `unicode`."""
    paint: Callable[[str, float | None], str] = _painted if colour else (lambda text, _percent: text)
    top_left, top_right, bottom_left, bottom_right, across, side, tee_left, tee_right = tuple(
        UNICODE_FRAME if unicode else ASCII_FRAME
    )
    rule = tee_left + across * (WIDTH + 2) + tee_right

    def line(text: str, shown: str | None = None) -> str:
        """A line of the box: `text` padded to the width, shown as `shown` (the same, coloured)."""
        clipped = _clip(text, WIDTH)
        return (
            f"{side} {shown if shown is not None and clipped == text else clipped}{' ' * (WIDTH - len(clipped))} {side}"
        )

    head = f"{printable(report.backend.name)}: readiness {report.readiness:.1f} %"
    lines = [
        top_left + across * (WIDTH + 2) + top_right,
        line(head, head.replace(f"{report.readiness:.1f} %", paint(f"{report.readiness:.1f} %", report.readiness))),
        line(_facts(report)),
    ]
    for tier in sorted({section.tier for section in report.sections}):
        lines += [rule, line(f"{f'Tier {tier}':<{WIDTH - 28}}{'earned':>10}{'max':>10}{'%':>8}")]
        for section in sorted((s for s in report.sections if s.tier == tier), key=lambda s: s.number):
            text, percent = _section(section)
            lines.append(line(text, text[:-8] + paint(text[-8:], section.percent) if percent else None))
    fixes = fix_first(report.sections, report.rows)[:TOP_FIXES]
    if fixes:
        lines += [rule, line(f"Fix first{'gain':>{WIDTH - 9}}")]
        for rank, fix in enumerate(fixes, start=1):
            gain = f"+{fix.gain:.2f} pp"
            label = _clip(f"{rank}. {printable(fix.row.item)} {printable(' '.join(fix.row.title.split()))}", WIDTH - 12)
            lines.append(line(f"{label}{gain:>{WIDTH - len(label)}}"))
            remedy = printable(" ".join(fix.row.remediation.split()))
            if remedy:
                lines.append(line(f"   {remedy}"))
    lines.append(bottom_left + across * (WIDTH + 2) + bottom_right)
    text = "\n".join(lines) + "\n"
    return text if unicode else text.encode("ascii", "replace").decode("ascii")


def fail_under_line(report: Report, bound: float) -> str:
    return f"{printable(report.backend.name)}: readiness {report.readiness:.1f} % is below --fail-under {bound:g} %"


def _facts(report: Report) -> str:
    unknown = sum(1 for row in report.rows if row.outcome == "unknown")
    return (
        f"{printable(report.integration_path.title)}; evidence coverage {report.coverage:.1f} %; "
        f"{unknown} {'row' if unknown == 1 else 'rows'} unknown"
    )


def _section(section: SectionResult) -> tuple[str, bool]:
    """The section's line, and whether it ends with a percentage (a section all N/A does not)."""
    label = _clip(f"{section.number:>3} {printable(section.title)}", WIDTH - 28)
    if section.percent is None:
        return f"{label:<{WIDTH - 28}}{'—':>10}{'—':>10}{'N/A':>8}", False
    return f"{label:<{WIDTH - 28}}{section.earned:>10.1f}{section.max_pts:>10.1f}{section.percent:>8.1f}", True


def _painted(text: str, percent: float | None) -> str:
    if percent is None:
        return text
    colour = "green" if percent >= GOOD else "yellow" if percent >= FAIR else "red"
    return click.style(text, fg=colour, bold=True)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
