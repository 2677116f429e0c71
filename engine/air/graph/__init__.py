"""Facts that span files, built from the index: the dependency graph, operator registrations,
and the tests that run on the device."""
