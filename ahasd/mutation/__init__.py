"""Mutation campaign: single-line bugs in ``hw/``, ``tb/``, ``sim/``, ``cosim/`` and the C firmware,
each run against its tests.

``make mutate`` (``python -m ahasd.mutation``) applies every mutant of
:mod:`~ahasd.mutation.catalogue` (``catalogue.toml``) to a private copy of the tree
(:mod:`~ahasd.mutation.tree`), runs the tests that cover the module
(:mod:`~ahasd.mutation.runner`), prints the survivors, a score per source file and, last,
``mutation score: K/N killed (P%)`` over the non-equivalent mutants. Mutants are located by
syntax-tree scope and a unique pattern (:mod:`~ahasd.mutation.locate`); the mechanical ones were
drawn with a fixed seed from the operators of the code (:mod:`~ahasd.mutation.draw`).
"""
