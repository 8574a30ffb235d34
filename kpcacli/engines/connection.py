"""Reaching a dask.distributed scheduler, and what its failures become: one line each.

A Client that cannot connect hangs for twice its timeout when collected and then prints a
traceback, so the scheduler is probed first; distributed's own log lines ("Couldn't gather 1
keys, rescheduling") would break the command line's one line, so they are silenced while a
:class:`kpcacli.engines.cluster.Cluster` is open.
"""

from __future__ import annotations

import logging

from ..utils.errors import KpcaError, ParameterError, param

INSTALL = "pip install 'kpcacli[cluster]' (in a clone of kpca: pip install -e '.[cluster]')"
CONNECT_SECONDS = 8  # to reach the scheduler, and then to see at least one worker: an error within 10 s
# What distributed raises when the workers holding or running a task are gone.
LOST_WORKER_ERRORS = {"KilledWorker", "FutureCancelledError", "CancelledError", "CommClosedError"}


def connect(address: str):
    """A distributed Client of the scheduler at `address` that has at least one worker, and
    the log levels to give back (:func:`restore_logs`) when it is closed.

    Raises
    ------
    KpcaError
        Without Dask's distributed package, when nothing answers at `address` within
        :data:`CONNECT_SECONDS`, or when the scheduler has no worker.
    ParameterError
        For an address that is not one.
    """
    try:
        from distributed import Client
    except ImportError:
        raise KpcaError(f"{param('scheduler')} needs Dask's distributed package: {INSTALL}") from None
    if not isinstance(address, str) or not address.strip():
        raise ParameterError(f"{param('scheduler')} needs the scheduler's address, e.g. tcp://10.0.0.5:8786")
    levels = silence_logs("distributed")
    try:
        probe(address, CONNECT_SECONDS)
        try:
            client = Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as error:
            raise KpcaError(f"cannot reach the Dask scheduler at '{address}' ({error})") from None
        try:
            client.wait_for_workers(1, timeout=CONNECT_SECONDS)
        except TimeoutError:
            client.close()
            raise KpcaError(
                f"the Dask scheduler at '{address}' has no workers; start some with 'dask worker {address}'"
            ) from None
    except BaseException:
        restore_logs(levels)
        raise
    return client, levels


def cluster_error(address: str, error: BaseException) -> KpcaError | None:
    """The one-line error a failure of the cluster itself (a lost worker, a closed connection)
    becomes; None for the errors that say what they are already (kpca's own, Ctrl-C, memory)
    and for those that are not the cluster's."""
    if isinstance(error, (KpcaError, KeyboardInterrupt, MemoryError)):
        return None
    if type(error).__name__ in LOST_WORKER_ERRORS:
        return KpcaError(
            f"the Dask cluster at '{address}' lost the workers running kpca's tasks "
            f"({workers_left(address)} left); nothing was written"
        )
    if type(error).__module__.split(".")[0] in ("distributed", "dask", "tornado", "asyncio"):
        return KpcaError(f"the Dask cluster at '{address}' failed: {type(error).__name__}: {error}")
    return None


def workers_left(address: str) -> str:
    """How many workers the scheduler at `address` still has, as words ("no worker", "1 worker")."""
    from distributed import Client

    try:
        with Client(address, timeout=2, set_as_default=False) as client:
            count = len(client.scheduler_info()["workers"])
    except Exception:  # the scheduler is gone too, or unreachable
        return "the scheduler is unreachable"
    return f"{count or 'no'} worker{'s' if count != 1 else ''}"


def silence_logs(prefix: str) -> dict[str, int]:
    """Silence the logger `prefix` and every logger under it (distributed sets a level on
    each of its own); returns their levels, for :func:`restore_logs`."""
    names = [name for name in logging.Logger.manager.loggerDict if name == prefix or name.startswith(prefix + ".")]
    levels = {name: logging.getLogger(name).level for name in [prefix, *names]}
    for name in levels:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    return levels


def restore_logs(levels: dict[str, int]) -> None:
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


def probe(address: str, seconds: float) -> None:
    """Reach the scheduler at `address` once before a Client is made: a Client that cannot
    connect hangs for twice its timeout when collected, then prints a traceback.

    Raises
    ------
    ParameterError
        For an address that is not one (``nonsense``).
    KpcaError
        When nothing answers there within `seconds`.
    """
    import asyncio

    from distributed.comm import connect

    async def reach() -> None:
        comm = await connect(address, timeout=seconds)
        await comm.close()

    try:
        asyncio.run(reach())
    except ValueError as error:
        raise ParameterError(
            f"{param('scheduler')} '{address}' is not a scheduler's address ({error}); e.g. tcp://10.0.0.5:8786"
        ) from None
    except (OSError, TimeoutError) as error:
        raise KpcaError(f"cannot reach the Dask scheduler at '{address}' ({error})") from None
