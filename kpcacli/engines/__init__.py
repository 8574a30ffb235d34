"""Where a workflow's heavy passes run, layer 5 (docs/architecture.md): every workflow is
written once against the protocol of :class:`.engine.Engine` (``training``, ``encode``,
``decode``), which this process implements (:class:`.engine.InProcess`, with kpca's thread
pools and memory budgets, :mod:`kpcacli.utils.parallel` and :mod:`kpcacli.utils.budgets`) and a Dask
cluster too (:class:`.cluster.Cluster`, ``--scheduler``).
"""
