"""The package's version, in a module of its own so that any layer can name it (in the mark
every output carries, :mod:`kpcacli.io.ownership`) without importing the package's front."""

__version__ = "0.1.0"
