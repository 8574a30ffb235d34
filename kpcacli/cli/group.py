"""The ``kpca`` command line: a thin click layer over :mod:`kpcacli.workflows`.

Each command parses its options, calls one workflow and reports. Domain errors from the library
become one line on standard error: exit status 1 for runtime errors (bad file, bad model), 2
for bad usage (bad option values). Numerical warnings are errors here, so none reaches the
terminal. Options shared by several commands are declared once, in :mod:`kpcacli.cli.options`.
"""

from __future__ import annotations

import os
import signal
import sys
import warnings

import click

from ..utils.blas import hold_blas_to_one_thread, single_threaded_blas
from ..utils.errors import KpcaError, KpcaWarning, ParameterError
from ..utils.version import __version__
from .shared import warn


class Interrupted(Exception):
    """Ctrl-C or SIGTERM, carried past click, which would print a blank line for it."""


class KpcaGroup(click.Group):
    """A click group whose every error is one line on standard error, never a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted from None

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if standalone_mode:
            # SIGTERM unwinds like Ctrl-C, so temporary stores and files are removed.
            signal.signal(signal.SIGTERM, _terminate)
            # One BLAS thread for the whole command, every BLAS it loads (kpcacli.utils.blas):
            # kpca parallelises its large passes itself (kpcacli.utils.parallel), and a spinning
            # BLAS pool collapses beside other work.
            hold_blas_to_one_thread()
        try:
            # numpy's BLAS is loaded already (the package imports it): held by threadpoolctl;
            # scipy's is not loaded here, to keep --help quick, and starts with one thread.
            with warnings.catch_warnings(), single_threaded_blas(load_scipy=False):
                warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow, invalid value, ...
                warnings.simplefilter("default", KpcaWarning)  # once each: a cut video, ...
                warnings.showwarning = _show_warning
                result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except (click.exceptions.Abort, Interrupted):
            _fail("interrupted", 130)
        except click.exceptions.NoArgsIsHelpError as error:  # `kpca`, `kpca plot`: asked for help
            click.echo(error.ctx.get_help())
            result = 0
        except click.ClickException as error:
            _fail(error.format_message(), error.exit_code)
        except ParameterError as error:
            _fail(error.spelled(_flag), 2)
        except KpcaError as error:
            _fail(error.spelled(_flag), 1)
        except (RuntimeWarning, FloatingPointError) as error:
            _fail(f"numerical failure ({error}); the input or model values may be out of range", 1)
        except MemoryError:
            _fail("out of memory; try fewer or smaller frames (--resize)", 1)
        except KeyboardInterrupt:
            _fail("interrupted", 130)
        except BrokenPipeError:
            # The reader of our standard output went away (e.g. `| head`): not our error.
            sys.stderr.close()
            sys.exit(1)
        except OSError as error:
            where = f" '{error.filename}'" if error.filename else ""
            _fail(f"{error.strerror or error}{where}", 1)
        except Exception as error:  # a bug: still one line, with a way to get the traceback
            if os.environ.get("KPCA_DEBUG"):
                raise
            _fail(f"internal error: {type(error).__name__}: {error} (set KPCA_DEBUG=1 for the traceback)", 1)
        if standalone_mode:
            sys.exit(result if isinstance(result, int) else 0)
        return result


def _flag(name: str, value=None) -> str:
    """The command line's spelling of the library's parameter `name` (set to `value`, when
    given): ``--resize``, ``-k``, ``--no-center``; the name itself when no command has it."""
    option = _options().get(name)
    if option is None:
        return name if value is None else f"{name} {value}"
    flag = max(option.opts, key=len)
    if value is None:
        return flag
    if isinstance(value, bool) and option.is_flag:
        return flag if value or not option.secondary_opts else option.secondary_opts[0]
    return f"{flag} {value}"


def _options() -> dict[str, click.Option]:
    """Every command's options by parameter name (commands share them: one declaration each)."""
    options: dict[str, click.Option] = {}
    groups = [main]
    while groups:
        group = groups.pop()
        for command in group.commands.values():
            if isinstance(command, click.Group):
                groups.append(command)
            for param in command.params:
                if isinstance(param, click.Option):
                    options.setdefault(param.name, param)
    return options


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A library warning as one ``Warning:`` line on standard error, without the source line,
    parameters named by their flags."""
    warn(message.spelled(_flag) if isinstance(message, KpcaWarning) else str(message))


def _terminate(signum, frame) -> None:
    raise KeyboardInterrupt


def _fail(message: str, status: int) -> None:
    click.echo(f"Error: {' '.join(str(message).split())}", err=True)
    sys.exit(status)


@click.group(cls=KpcaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kpca")
def main():
    """Compress and reconstruct image sequences with kernel PCA.

    \b
    Fit a model, encode frames into k numbers, decode k numbers back into frames:
      kpca fit frames/ -m model.npz -k 3
      kpca encode frame.png -m model.npz -o codes.npy
      kpca decode codes.npy -m model.npz -o back.png
      kpca encode frame.png | kpca decode - -o back.png
    """
