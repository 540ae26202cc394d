"""Trace formats and stimulus generators (``docs/trace-format.md``).

One reader per format, all under the line rules of :mod:`ahasd.sim.traces.lines` and raising the
one :class:`ahasd.sim.traces.errors.TraceError`: decoding traces (:mod:`.decoding`), EDC events
(:mod:`.edc`), TVC transactions (:mod:`.tvc`). Generators: EDC cycle and event streams
(:mod:`.edc_events`), GTS stimulus (:mod:`.gts_events`), TVC traces (:mod:`.tvc`), long traces of
every format, produced lazily (:mod:`.large`).
"""
