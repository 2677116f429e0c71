"""The JSON schema every report must satisfy."""

from __future__ import annotations

import json

from jsonschema import Draft202012Validator

from helpers.paths import REPO_ROOT

REPORT_SCHEMA = REPO_ROOT / "schemas" / "report.schema.json"
REPORT_VALIDATOR = Draft202012Validator(json.loads(REPORT_SCHEMA.read_text(encoding="utf-8")))
