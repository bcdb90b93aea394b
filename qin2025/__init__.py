"""This paper's claim suite on claimcheck's core.

Qin et al., "On the Convergence of Gradient Descent on Learning Transformers with Residual Connections"
(arXiv:2506.05249): its model, GD engine, data, model protocol and pytest plugin.
"""
