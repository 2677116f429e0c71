#!/usr/bin/env bash
# The GitHub Action's check (action.yml runs it; run it locally the same way): air check on
# AIR_PATH with AIR_PACK, every report written to AIR_REPORTS (markdown, JSON, HTML, SARIF,
# JUnit, badge). The readiness, the SARIF file and whether it fell below AIR_FAIL_UNDER go to
# $GITHUB_OUTPUT when that is set; the summary box to $GITHUB_STEP_SUMMARY. It exits as air
# does: 0, 1 below the bound, 2 on bad input.
set -uo pipefail
path="${AIR_PATH:-.}"
pack="${AIR_PACK:-pytorch-2.x}"
reports="${AIR_REPORTS:-air-report}"
air="${AIR_COMMAND:-air}"
mkdir -p "$reports"
arguments=(check --pack "$pack")
for format in markdown:md json:json html:html sarif:sarif junit:junit.xml badge:badge.json; do
  arguments+=(--format "${format%%:*}" --output "$reports/air.${format#*:}")
done
if [[ -n "${AIR_FAIL_UNDER:-}" ]]; then
  arguments+=(--fail-under "$AIR_FAIL_UNDER")
fi
summary="$("$air" "${arguments[@]}" "$path")"
status=$?
printf '%s\n' "$summary"
if [[ -n "${GITHUB_STEP_SUMMARY:-}" && -n "$summary" ]]; then
  printf '```\n%s\n```\n' "$summary" >> "$GITHUB_STEP_SUMMARY"
fi
if [[ -n "${GITHUB_OUTPUT:-}" && -f "$reports/air.json" ]]; then
  readiness="$(python3 -c 'import json, sys; print(round(json.load(open(sys.argv[1]))["readiness"], 1))' "$reports/air.json")"
  {
    echo "readiness=$readiness"
    echo "sarif=$reports/air.sarif"
    echo "exit-code=$status"
  } >> "$GITHUB_OUTPUT"
fi
exit "$status"
