"""Test helpers reusable by benchmarks (never imported by the app)."""
