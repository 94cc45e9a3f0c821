"""The reporting: the ledger of the lecture's numbers and its checks (`ledger`, `checks`), the
figures, the report's Markdown and HTML (`report`, `claims`, `page`, `worked_examples`), the
build's provenance, the comparison of two builds (`diff`) and the committed reference build
(`reference`). Machinery, not the lecture: the lecture's code never imports it
(tests/test_architecture.py).
"""
