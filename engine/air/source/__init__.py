"""Where a backend's source comes from: a path, an installed distribution, an sdist or a git
URL; the tree's files as it may safely read them; and the provenance recorded for the report."""
