"""Domain errors raised by the library; the command-line layer turns them into one-line messages.

Every message is a single line that names the file or value at fault and, where it helps, what
to do about it.
"""

import ast
import lzma
import re
import struct
import tokenize
import zipfile
import zlib
from collections.abc import Callable

# What a damaged .npy header or zip can raise from numpy's and zipfile's readers: the header
# is parsed as a Python literal (SyntaxError, TokenError), and its shape can be impossible
# (MemoryError, OverflowError, ValueError). Readers turn these into one-line KpcaErrors.
DAMAGED_FILE_ERRORS = (
    ValueError,
    OSError,
    EOFError,
    SyntaxError,
    tokenize.TokenError,
    MemoryError,
    OverflowError,
    TypeError,
    KeyError,
    IndexError,
    NotImplementedError,  # zipfile: an unknown compression method
    RuntimeError,  # zipfile: an "encrypted" flag
    zlib.error,
    lzma.LZMAError,
    struct.error,
    zipfile.BadZipFile,
)


# A parameter named in a message is marked by NUL characters, which no path or value holds.
_PARAMETER = re.compile("\0([^\0]*)\0")


def param(name: str, value=None) -> str:
    """A parameter named in a message, as its reader calls it: the library's ``str(error)``
    gives its Python name (``resize``, ``center=False``), the command line its flag
    (``--resize``, ``--no-center``: :meth:`KpcaError.spelled`)."""
    return f"\0{name}\0" if value is None else f"\0{name}={value!r}\0"


def spell(text: str, flag: Callable[[str, object], str] | None = None) -> str:
    """`text` with each :func:`param` marker spelled by ``flag(name, value)`` (``value`` None
    when none was given), by default as Python names it."""

    def spelled(match: re.Match) -> str:
        name, _, value = match.group(1).partition("=")
        if flag is None:
            return match.group(1)
        return flag(name, ast.literal_eval(value) if value else None)

    return _PARAMETER.sub(spelled, text)


class KpcaError(Exception):
    """A problem with the user's input, files or environment (command-line exit status 1).

    Messages name parameters through :func:`param`: as Python names them here, and as flags
    on the command line."""

    def __str__(self) -> str:
        return spell(super().__str__())

    def spelled(self, flag: Callable[[str, object], str]) -> str:
        """The message with each parameter spelled by ``flag(name, value)``."""
        return spell(super().__str__(), flag)


class InputError(KpcaError, ValueError):
    """A source (image, video, matrix, codes file) that cannot be read or does not fit."""


class ModelFileError(KpcaError):
    """A model file that is missing, damaged, of an unknown version or unsafe to load."""


class ParameterError(KpcaError, ValueError):
    """A parameter value outside its allowed range (command-line exit status 2)."""


class DegenerateKernelError(KpcaError):
    """A kernel matrix with no positive eigenvalue once centred: every sample the same to the
    kernel (:func:`kpcacli.numerics.spectrum.check_psd`)."""


class RankError(ParameterError):
    """k above the rank of the kernel matrix: more components than it has of non-zero
    eigenvalue (:func:`kpcacli.numerics.components.choose_k`)."""


class KpcaWarning(UserWarning):
    """Something the user should know, though the work goes on: the command line prints it as
    one ``Warning:`` line (once per command). Parameters are named as in :class:`KpcaError`."""

    def __str__(self) -> str:
        return spell(super().__str__())

    def spelled(self, flag: Callable[[str, object], str]) -> str:
        """The message with each parameter spelled by ``flag(name, value)``."""
        return spell(super().__str__(), flag)


class InputWarning(KpcaWarning):
    """A source that can be read, but not all of it (a video cut short)."""


class OutputWarning(KpcaWarning):
    """An output that cannot hold what is written exactly (colour frames in a GIF)."""


class ParameterWarning(KpcaWarning):
    """A parameter value that cannot be honoured as given and was adjusted (more neighbours
    than training frames)."""
