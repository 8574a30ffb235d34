"""``from kpcacli.request import FrameRequest``, as the README shows it: the module is
:mod:`kpcacli.io.request` (kept so that code written against the README keeps working)."""

from .io.request import FrameRequest

__all__ = ["FrameRequest"]
