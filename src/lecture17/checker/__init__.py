"""`python -m lecture17 check FILE.py`: a student's own blocks held against the lecture's claims
(numpy blocks: `cli`, `run`, `session`; torch classes, `--trained`: `trained`, `adapters`).
Machinery, not the lecture: nothing in the lecture's code imports it.
"""
