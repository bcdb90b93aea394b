"""Decide claims: pure statistics, sequential bounds, unit scoring, verdicts, calibration of rules."""
