"""The pipeline: run one job of a demo and write its CSVs (`job`, `csvio`), aggregate a demo's
runs into its seed-averaged table (`aggregate`), and name the source files a rule depends on
(`deps`). Machinery, not the lecture: the lecture's code (attention_numpy, tiny_transformer,
training, torch_models, experiments/) never imports it (tests/test_architecture.py).
"""
