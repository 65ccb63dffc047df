"""Parsing multi-document YAML manifests, fast and memoised.

Applications are deployed from the same manifest text many times (every attempt, every check
run); parsing it is a measurable share of a run. Parsed documents are cached by text (bounded)
and handed out as fresh copies, so callers may mutate what they get. libyaml's C loader is used
when PyYAML was built with it.
"""

from __future__ import annotations

from typing import Any

import yaml

from sregym.twin.machinery.objects import clone

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CACHE: dict[str, list[Any]] = {}
_CACHE_LIMIT = 64


def load_documents(text: str) -> list[Any]:
    """Every non-empty document of `text`, as fresh copies."""
    docs = _CACHE.get(text)
    if docs is None:
        docs = [d for d in yaml.load_all(text, Loader=_LOADER) if d]
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[text] = docs
    return [clone(d) for d in docs]


def load_document(text: str) -> Any:
    """The one document of `text` (a values file, a config), parsed with the same loader and not
    cached: a caller that reads it once memoises the result itself."""
    return yaml.load(text, Loader=_LOADER)
