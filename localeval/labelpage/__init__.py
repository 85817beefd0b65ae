"""The labelling page (`localeval label`): a person labels a run's claims or samples, or reviews
a test set made by `generate`, in a local browser page served on 127.0.0.1.

`session` (a run's samples, their orders and labels), `review` (a test set's rows and the
decisions file), `server` (the HTTP server and its JSON API), `static/` (the page: HTML, CSS,
JS; no network). A plug-in: the core never imports it.
"""

__all__ = ["review", "server", "session"]
