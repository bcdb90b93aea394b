"""C5: larger beta, faster on Jena Climate: what it measures and decides (``level_speed``,
``residual_speed``), its calibration families and the challenge families written from its words.
"""
