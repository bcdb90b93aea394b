"""C4: rank-one collapse at large d_QK: what it measures and decides (``collapse``), its calibration
families and the challenge families written from its words.
"""
