"""The reduced protocol of `make mutants`: config/config.yaml with mutants/protocol.yaml on top.

Every analytic demo keeps its settings (full size). The trained demos, and the recorded ones
they feed (07.x, 08.x), take protocol.yaml's fewer steps or seeds: a mutant's copy rebuilds
them, its recorded demos included, so their verdicts are judged there, not found stale.
"""

import json
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
OVERLAY = ROOT / "mutants" / "protocol.yaml"
CONFIG = "config/mutants.yaml"  # where a build folder gets the reduced config


def merge(base, overlay):
    """`overlay` on top of `base`: dicts merge key by key, anything else replaces."""
    if not isinstance(base, dict) or not isinstance(overlay, dict):
        return overlay
    merged = dict(base)
    for key, value in overlay.items():
        merged[key] = merge(base.get(key), value) if key in base else value
    return merged


def reduced_config(full: dict, overlay: dict) -> dict:
    """The full config (YAML anchors unshared: each demo its own copy) with the overlay's demos
    merged in and its `drop` list left out; a demo the overlay names that the config lacks fails."""
    config = json.loads(json.dumps(full))  # anchors made independent copies
    named = set(overlay.get("demos", {})) | set(overlay.get("drop", []))
    if unknown := sorted(named - set(config["demos"])):
        raise ValueError(f"mutants/protocol.yaml names unknown demos {unknown}")
    for demo, changes in overlay.get("demos", {}).items():
        config["demos"][demo] = merge(config["demos"][demo], changes)
    for demo in overlay.get("drop", []):
        del config["demos"][demo]
    return config


def load(root: Path = ROOT, overlay: Path = OVERLAY) -> dict:
    """The reduced config of the repository at `root`: its config/config.yaml, `overlay` on top."""
    full = yaml.safe_load(Path(root, "config", "config.yaml").read_text(encoding="utf-8"))
    return reduced_config(full, yaml.safe_load(Path(overlay).read_text(encoding="utf-8")))


def write(folder: Path, overlay: Path = OVERLAY) -> Path:
    """config/mutants.yaml in a build folder, from that folder's own config and `overlay`."""
    path = Path(folder, CONFIG)
    path.write_text(yaml.safe_dump(load(folder, overlay), sort_keys=False), encoding="utf-8")
    return path
