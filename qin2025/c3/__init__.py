"""C3: the floor on sigma_min(Z): what it measures and decides (``full_rank``), its calibration
families and the challenge families written from its words.
"""
