"""C1 (and C8): the linear rate: what it measures and decides (``linear_rate``), its calibration
families and the challenge families written from its words.
"""
