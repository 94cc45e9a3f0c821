"""Shared test set-up: the same examples on every run, so a CI failure can be rerun here."""

from hypothesis import settings

# Property tests draw random inputs; derandomize makes the draws a function of the test alone
# (no database, no clock), like every seeded number in the lecture's code (§0.5).
settings.register_profile("lecture17", derandomize=True, database=None, print_blob=True)
settings.load_profile("lecture17")
