"""A corpus of real web software (Datasette, Django admin, Pelican, Trac) served on loopback
with generated data, its layouts with ground truth, and the scoring of a scrape against it."""
