"""Human labels of a run: the labels file (`store`), the prediction-powered mean (`ppi`), a run's
corrected estimates (`estimate`)."""

__all__ = ["estimate", "ppi", "store"]
