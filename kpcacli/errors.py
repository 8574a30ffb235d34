"""Domain errors raised by the library; the command-line layer turns them into one-line messages.

Every message is a single line that names the file or value at fault and, where it helps, what
to do about it.
"""


class KpcaError(Exception):
    """A problem with the user's input, files or environment (command-line exit status 1)."""


class InputError(KpcaError):
    """A source (image, video, matrix, codes file) that cannot be read or does not fit."""


class ModelFileError(KpcaError):
    """A model file that is missing, damaged, of an unknown version or unsafe to load."""


class ParameterError(KpcaError, ValueError):
    """A parameter value outside its allowed range (command-line exit status 2)."""
