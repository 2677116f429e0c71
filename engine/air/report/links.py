"""Evidence links: where a report's `path:line` citations point.

When the code came from a known git host (GitHub, GitLab, Gitee), by its URL or as a local
checkout whose origin is one, a citation links to the file at the recorded commit, at its
line: a permalink. Otherwise, for a local tree, it links relative to the report's folder into
the tree. Code from elsewhere (a fetched URL on another host, an installed distribution's
temporary copy) is cited without a link.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from air.results import Source

# host -> how a file at a commit is addressed under https://<host>/<repository>
HOSTS = {"github.com": "blob", "gitlab.com": "-/blob", "gitee.com": "blob"}
_REPOSITORY = re.compile(
    r"^(?:https?://(?:[^@/]+@)?|ssh://(?:[^@/]+@)?|git@)(?P<host>[^/:]+)(?::\d+)?[:/](?P<path>[\w.-]+(?:/[\w.-]+)+)/?$"
)


@dataclass(frozen=True)
class EvidenceLinks:
    """How to link a citation: a permalink prefix, or a relative one, or neither."""

    base: str | None = None  # ends with "/": the file's path follows
    permalink: bool = False  # line anchors are #L<line> on the host

    def url(self, path: str, line: int) -> str | None:
        if self.base is None:
            return None
        return f"{self.base}{quote(path)}#L{line}" if self.permalink else f"{self.base}{quote(path)}"


NO_LINKS = EvidenceLinks()


def evidence_links(source: Source, tree: Path | None = None, report_folder: Path | None = None) -> EvidenceLinks:
    """The links for citations of `source`'s tree (at `tree`), in a report written to `report_folder`."""
    url = source.remote if source.kind == "local" else source.location if source.kind == "git" else None
    permalink = _permalink_base(url, source.commit) if url else None
    if permalink is not None:
        folder = f"{quote(source.subdir.strip('/'))}/" if source.subdir else ""
        return EvidenceLinks(permalink + folder, permalink=True)
    if source.kind == "local" and tree is not None and report_folder is not None:
        relative = Path(os.path.relpath(tree.resolve(), report_folder.resolve())).as_posix()
        return EvidenceLinks("" if relative == "." else f"{quote(relative)}/")
    return NO_LINKS


def _permalink_base(url: str, commit: str | None) -> str | None:
    matched = _REPOSITORY.match(url.strip())
    if matched is None or commit is None or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", commit):
        return None
    host = matched["host"].lower()
    if host not in HOSTS:
        return None
    return f"https://{host}/{matched['path'].removesuffix('.git')}/{HOSTS[host]}/{commit}/"
