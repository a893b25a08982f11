"""Support code for the tests and for checks run by hand (not test modules: pytest collects
nothing here)."""
