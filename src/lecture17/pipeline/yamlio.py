"""YAML, read with libyaml's parser where PyYAML was built with it.

The same safe loading as `yaml.safe_load` (the same constructor and resolver; only the parser
is C), several times faster: the report reads the ledger's and views' YAML files at every build,
and `make mutants` at every mutant. tests/pipeline/test_yamlio.py checks that every YAML file of
the repository loads to the same data both ways.
"""

import yaml

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(stream):
    """yaml.safe_load(stream), with the C parser when there is one."""
    return yaml.load(stream, Loader=LOADER)  # noqa: S506 (a safe loader)
