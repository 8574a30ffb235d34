"""What every layer uses, layer 0 (docs/architecture.md): it imports nothing else of kpca.

* :mod:`.errors`: the domain errors and warnings (``kpcacli.KpcaError`` and its kinds), and how a
  parameter is named to a Python caller and to the command line;
* :mod:`.checks`: the one validation helper of every value that enters;
* :mod:`.parallel`: thread pools that stop at the next block on Ctrl-C, thread budgets;
  :mod:`.cores`: the cores kpca's threads may use; :mod:`.blas`: BLAS held to one thread;
  :mod:`.budgets`: every memory budget, named for its pass;
* :mod:`.atomic`: output files written atomically with the umask's mode;
* :mod:`.progress`: progress bars; :mod:`.version`: the version.
"""
