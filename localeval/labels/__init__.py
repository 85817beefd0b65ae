"""Human labels of a run: the labels file (`store`), which labels judged the content the run
holds (`bound`), the prediction-powered mean (`ppi`), a run's corrected estimates (`estimate`),
shown in words (`show`), written into summary.json and the report (`attach`), the corrected
difference of two runs (`compare`) and τ fitted for a judge (`calibrate`). The labelling page is
`localeval label`."""

__all__ = ["attach", "bound", "calibrate", "compare", "estimate", "ppi", "show", "store"]
