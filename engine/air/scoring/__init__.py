"""From evidence to verdicts: row findings, integration path detection, the readiness formula,
operator coverage, the test inventory and upstream candidates."""
