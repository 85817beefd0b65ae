"""`run --estimate`: a run sized before it starts, without loading the judge.

| module | job |
| --- | --- |
| `sizing` | the estimate: rows → dry run → engine work → replay → steps, totals, time |
| `dryrun` | the metrics against a recording judge with placeholder answers (cache read only) |
| `workload` | a request's prompt tokens and cuts, its answer as stretches to read or generate |
| `simulate` | the engine's schedule (judge/llamacpp/schedule.py) replayed, each decode priced |
| `calibrate` | this machine's decode speeds, measured once with the real judge, cached |
| `table` | the estimate as a table for people |
"""

__all__ = ["calibrate", "dryrun", "simulate", "sizing", "table", "workload"]
