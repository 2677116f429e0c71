"""Writing a report: markdown, JSON, and the files they go to."""
