"""Batches: a list of requests run on an engine (in-process asyncio, or Dask distributed), each
item an ordinary child session sent back to the one store; the batch is a session too.

`plan.py` turns a command's inputs into items, `worker.py` runs one item where it lands,
`engines.py` says where that is, `runner.py` schedules the items and records the batch,
`evaluation.py` judges eval items and reports on eval batches. `state.py` is the batch's part of
the session fold (no import beyond the events). `drive.py` is the one driver both front ends
run a batch through (engine and cache opened, items queued and run, both closed);
`inputs.py` checks what the TUI's form gives into a plan and an engine.
"""
