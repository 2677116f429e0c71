"""An HTML report as a reader sees it: rendered by headless Chromium, with a probe script the
tests add to a copy of the page. The probe reads the laid-out page (the score, the chart's
bars, the rows) and clicks every filter, then leaves what it saw, as JSON, on the body's
`data-seen` attribute, which Chromium's dumped DOM carries back."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--virtual-time-budget=5000")
PROBE = """<script>
window.addEventListener('load', function () {
  function visible(element) { var box = element.getBoundingClientRect(); return box.width > 0 && box.height > 0; }
  var rows = Array.prototype.slice.call(document.querySelectorAll('#rows tbody tr'));
  var shown = function () { return rows.filter(function (row) { return row.getClientRects().length > 0; }).length; };
  var score = document.querySelector('#readiness .value');
  var chart = document.getElementById('sections-chart');
  var seen = {
    score: score && visible(score) ? score.textContent : null,
    chart: chart && visible(chart) ? chart.getBoundingClientRect().height : 0,
    bars: Array.prototype.filter.call(document.querySelectorAll('#sections-chart rect.bar'), function (bar) {
      return bar.getBoundingClientRect().width > 0; }).length,
    rows: rows.length, shownAtLoad: shown(), filters: {}
  };
  document.querySelectorAll('#filters button').forEach(function (button) {
    button.click();
    var filter = button.dataset.filter;
    seen.filters[filter] = {shown: shown(), active: button.classList.contains('active'), wanted: rows.filter(function (row) {
      return filter === 'all' || (filter === 'verified' ? row.dataset.verified === 'true' : row.dataset.status === filter);
    }).length};
  });
  document.body.setAttribute('data-seen', JSON.stringify(seen));
});
</script>"""


def browser() -> str | None:
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def seen_in_browser(page: Path, work: Path, fragment: str = "") -> dict:
    """What the probe saw of `page` (a copy of it, in `work`, with the probe added)."""
    probed = work / f"probed-{page.name}"
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    found = browser()
    assert found is not None, "no Chromium to render the page with"
    done = subprocess.run(
        [found, *FLAGS, "--dump-dom", probed.as_uri() + fragment], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    attribute = re.search(r'<body[^>]*data-seen="([^"]*)"', done.stdout)
    assert attribute is not None, "the probe left nothing: the page's scripts did not run"
    return json.loads(html.unescape(attribute.group(1)))


def screenshot(page: Path, picture: Path) -> int:
    """Take a screenshot of `page` into `picture`; its size in bytes."""
    found = browser()
    assert found is not None, "no Chromium to render the page with"
    done = subprocess.run(
        [found, *FLAGS, "--window-size=1280,2400", f"--screenshot={picture}", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and picture.is_file(), done.stderr[-2000:]
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return picture.stat().st_size
