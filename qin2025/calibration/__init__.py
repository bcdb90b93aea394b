"""Calibration families of this paper's decisions: cases whose answer is known, one module per instrument.

Each module builds ``claimcheck.protocol.spec.Family`` objects for the parts that use its decision:
``linear_rate`` (C1, C8), ``monotone`` (C2), ``full_rank`` (C3), ``collapse`` (C4), ``residual_speed``
(C5), ``depth`` (C6), ``conditioning`` (C7). Cases are synthetic (curves, rate tables, matrices):
nothing here trains a model. Must-fail families are the hardest plausible alternatives to the
claim, not strawmen; must-pass families reach the slowest and noisiest cases seen in real runs.
``draw`` holds the small samplers they share.
"""
