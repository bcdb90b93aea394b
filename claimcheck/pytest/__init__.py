"""The pytest plugin: options, markers, the session that orders a run, workers and timeouts."""
