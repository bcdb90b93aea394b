"""The paper's training engine: the model, gradient descent, batched sweeps, the cached trainer, the
measurements it stores, and the identity of its code (what every cache key names)."""
