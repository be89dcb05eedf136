"""From bundles to what an engine runs: their modules and their data, together.

:func:`plan_activation` takes the bundles to serve (by name) and returns an
:class:`ActivationPlan`: every module (``{path: (text, parsed module)}``) and
the data of all bundles merged. It refuses what OPA's bundle activation
refuses: two bundles whose roots overlap (``detected overlapping roots in
bundle manifest with: [a b]``), data or a package outside a bundle's roots.

Building the engine from the plan, and keeping the previous engine when the
new one does not compile, is the caller's: :func:`pyrego.plugins.bundle.build_engine`
and :class:`pyrego.plugins.bundle.BundleActivator` do it for the server,
``pyrego eval -b`` into its own engine.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyrego.bundle.model import Bundle, BundleError, root_paths_overlap
from pyrego.bundle.reader import check_data_roots

__all__ = ["ActivationPlan", "plan_activation", "module_name"]


@dataclass
class ActivationPlan:
    """The modules and data of a set of bundles, ready for an engine.

    ``policies``: ``{module path: (text, parsed module)}`` (what
    :meth:`pyrego.engine.Engine.install_modules` takes); ``data``: the merged
    base documents; ``revisions``: each bundle's manifest revision;
    ``roots``: each bundle's roots."""

    policies: dict[str, tuple[str, Any]] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    revisions: dict[str, str] = field(default_factory=dict)
    roots: dict[str, list[str]] = field(default_factory=dict)

    @property
    def texts(self) -> dict[str, str]:
        """The module texts by path (what :meth:`~pyrego.engine.Engine.add_policies` takes)."""
        return {k: v[0] for k, v in self.policies.items()}


def module_name(bundle_name: str, path: str) -> str:
    """OPA's ``modulePathWithPrefix``: a module of a named bundle is known as ``name/path``."""
    if "://" in bundle_name:
        from urllib.parse import urlsplit

        u = urlsplit(bundle_name)
        return posixpath.join(u.netloc, u.path, path.lstrip("/")) if (u.netloc or u.path) else path
    return posixpath.join(bundle_name, path.lstrip("/")) if bundle_name else path


def _check_overlaps(bundles: Mapping[str, Bundle]) -> None:
    """OPA's ``hasRootsOverlap``: every bundle whose roots overlap another's is named."""
    names = list(bundles)
    collisions: set[str] = set()
    for name in names:
        for other in names:
            if other != name and any(root_paths_overlap(r, o) for r in bundles[name].roots for o in bundles[other].roots):
                collisions.add(other)
    if collisions:
        from pyrego.bundle.model import go_list

        raise BundleError(f"detected overlapping roots in bundle manifest with: {go_list(sorted(collisions))}")


def _merge(a: dict[str, Any], b: Mapping[str, Any], path: str) -> None:
    for k, v in b.items():
        if k in a and isinstance(a[k], dict) and isinstance(v, Mapping):
            _merge(a[k], v, f"{path}/{k}")
        elif k in a:
            raise BundleError(f"bundles write conflicting data at '{path}/{k}'")
        else:
            a[k] = v


def plan_activation(
    bundles: Mapping[str, Bundle], *, prefix_module_names: bool = True, unprefixed: Collection[str] = ()
) -> ActivationPlan:
    """Check ``bundles`` together (roots of one another, each one's own roots)
    and gather their modules and data.

    Module paths are ``bundle-name/path`` (``prefix_module_names``, as OPA
    names the modules of downloaded bundles) or the paths as read (all
    bundles without ``prefix_module_names``, else those named in
    ``unprefixed``: bundles read from files, whose paths name them already)."""
    _check_overlaps(bundles)
    plan = ActivationPlan()
    for name, b in bundles.items():
        check_data_roots(b.data, b.roots)
        plan.revisions[name] = b.revision
        plan.roots[name] = b.roots
        for path, text in b.modules.items():
            parsed = b.parsed.get(path)
            if parsed is None:
                from pyrego.parse.parser import parse_module

                parsed = parse_module(text, path, rego_v1=b.module_rego_v1.get(path, True))
            full = module_name(name, path) if prefix_module_names and name not in unprefixed else path
            if full in plan.policies:
                raise BundleError(f"module {full} is in more than one bundle")
            if full != path:
                from pyrego.parse.parser import parse_module

                parsed = parse_module(text, full, rego_v1=b.module_rego_v1.get(path, True))
            plan.policies[full] = (text, parsed)
        _merge(plan.data, b.data, "")
    return plan
