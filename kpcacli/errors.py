"""Domain errors raised by the library; the command-line layer turns them into one-line messages.

Every message is a single line that names the file or value at fault and, where it helps, what
to do about it.
"""

import lzma
import struct
import tokenize
import zipfile
import zlib

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


class KpcaError(Exception):
    """A problem with the user's input, files or environment (command-line exit status 1)."""


class InputError(KpcaError):
    """A source (image, video, matrix, codes file) that cannot be read or does not fit."""


class ModelFileError(KpcaError):
    """A model file that is missing, damaged, of an unknown version or unsafe to load."""


class ParameterError(KpcaError, ValueError):
    """A parameter value outside its allowed range (command-line exit status 2)."""


class KpcaWarning(UserWarning):
    """Something the user should know, though the work goes on: the command line prints it as
    one ``Warning:`` line (once per command)."""


class InputWarning(KpcaWarning):
    """A source that can be read, but not all of it (a video cut short)."""


class ParameterWarning(KpcaWarning):
    """A parameter value that cannot be honoured as given and was adjusted (more neighbours
    than training frames)."""
