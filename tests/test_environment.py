"""The pinned environment: requirements.txt and environment.yml say the same thing."""

import re
import subprocess
import sys

import yaml
from conftest import ROOT


def requirement_pins() -> list[str]:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_every_requirement_is_pinned_exactly():
    pins = requirement_pins()
    assert pins, "requirements.txt is empty"
    loose = [p for p in pins if not re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[A-Za-z0-9_.+\-]+", p)]
    assert loose == [], f"not pinned with ==: {loose}"


def test_torch_is_pinned_to_its_cpu_build():
    # An unpinned or newer torch pulls a multi-GB CUDA build; 2.13.0 from PyPI is the CPU one.
    assert "torch==2.13.0" in requirement_pins()


def test_environment_yml_pins_the_same_versions():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pip_section == requirement_pins()
    assert "python=3.11" in env["dependencies"]


def test_environment_yml_is_what_the_generator_writes():
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "workflow/scripts/make_environment.py"),
            str(ROOT / "requirements.txt"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout == (ROOT / "environment.yml").read_text()


def test_installed_versions_match_the_pins():
    from importlib import metadata

    for pin in requirement_pins():
        name, version = pin.split("==")
        installed = metadata.version(name)
        assert installed.split("+")[0] == version, (
            f"{name}: installed {installed}, pinned {version}"
        )


def test_the_repository_carries_a_licence_and_a_citation_that_agree():
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert licence.startswith("MIT License") and citation["license"] == "MIT"
    assert {"cff-version", "message", "title", "authors"} <= set(citation)
    assert "Lecture 17" in citation["title"]
