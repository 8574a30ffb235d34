"""The command line, layer 6 (docs/architecture.md): a thin click layer over the workflows.

* :mod:`.group`: the ``kpca`` group, whose every error is one line on standard error;
* :mod:`.shared`: what the commands share (checking outputs, building the frame request and
  the estimator, notes and warnings);
* :mod:`.options`: the options several commands share, declared once;
* :mod:`.fitting`, :mod:`.coding`, :mod:`.reconstructing`, :mod:`.measuring`: the commands, by what they do,
  registered on the group in :mod:`.commands`, explicitly;
* :mod:`.entry`: the ``kpca`` console script, which imports all of the above only once it
  can turn Ctrl-C into one line.

``main`` (the group) is imported when first asked for: importing this package imports nothing
heavy, so that the console script starts before numpy and click load.
"""


def __getattr__(name: str):
    if name == "main":
        from .commands import main

        return main
    raise AttributeError(f"module 'kpcacli.cli' has no attribute {name!r}")


__all__ = ["main"]
