"""Prints the distributions installed in a virtual environment that Herald does not
need at run time, one per line, for the Dockerfile to uninstall.

requirements.lock holds the runtime and the development dependencies together
(tests, linters, code generators). The image installs the whole lock with its
hashes, then keeps only what the installed Herald distributions require,
transitively, extras and environment markers included. Run it with the target
environment's own interpreter:

    /opt/herald/bin/python dev_only.py [--drop NAME ...]

`--drop` removes runtime requirements a container never uses (the embedded NATS
and PostgreSQL servers behind `herald up`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from importlib.metadata import Distribution, distributions, entry_points

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOTS_GROUPS = ("herald.services", "herald.commands")


def installed() -> dict[str, Distribution]:
    return {canonicalize_name(d.metadata["Name"]): d for d in distributions()}


def roots(dists: dict[str, Distribution]) -> set[str]:
    """Herald itself and every distribution that plugs a service or command into it."""
    found = {"herald"}
    for group in ROOTS_GROUPS:
        for entry in entry_points(group=group):
            if entry.dist is not None:
                found.add(canonicalize_name(entry.dist.metadata["Name"]))
    return {name for name in found if name in dists}


def closure(dists: dict[str, Distribution], start: Iterable[str], drop: set[str]) -> set[str]:
    """Everything `start` requires, following extras and evaluating markers here."""
    keep: set[str] = set()
    todo: list[tuple[str, frozenset[str]]] = [(name, frozenset()) for name in start]
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, extras = todo.pop()
        if (name, extras) in seen or name in drop or name not in dists:
            continue
        seen.add((name, extras))
        keep.add(name)
        for line in dists[name].requires or []:
            req = Requirement(line)
            envs = [{"extra": e} for e in extras] or [{"extra": ""}]
            if req.marker is not None and not any(req.marker.evaluate(env) for env in envs):
                continue
            todo.append((canonicalize_name(req.name), frozenset(req.extras)))
    return keep


def dev_only(drop: Iterable[str] = ()) -> list[str]:
    dists = installed()
    dropped = {canonicalize_name(name) for name in drop}
    keep = closure(dists, roots(dists), dropped)
    # The installers themselves are not Herald's to remove.
    keep |= {"pip", "setuptools", "wheel"} & set(dists)
    return sorted(set(dists) - keep)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drop", nargs="*", default=[], help="runtime requirements to remove as well")
    args = parser.parse_args(argv)
    for name in dev_only(args.drop):
        print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
