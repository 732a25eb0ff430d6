"""The task executor: a task in words plus a context dict become generated Python that is
checked before and after it runs, retried with its error history, cached and recorded."""
