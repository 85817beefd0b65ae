"""Human labels of a run: the labels file and what is computed from it."""
