"""`run --estimate`: a run sized before it starts, without loading the judge.

| module | job |
| --- | --- |
| `sizing` | the estimate: rows → dry run → engine work → replay → steps, totals, time |
| `dryrun` | the metrics against a recording judge with placeholder answers (cache read only) |
| `workload` | a request's prompt tokens and cuts, its answer as stretches to read or generate |
| `simulate` | the engine's schedule replayed (slots, prefix reuse, decode calls priced) |
| `calibrate` | this machine's decode speeds, measured once with the real judge, cached |
| `report` | the table |
"""

__all__ = ["calibrate", "dryrun", "report", "simulate", "sizing", "workload"]
