"""The status parts of :class:`ahasd.hw.controller.Controller`'s ``elaborate``: the queue event
counters and fill levels, and the interrupts (see :mod:`ahasd.hw.controller_flow` for the
conventions of ``m``, ``ctl``, ``regs`` and the shared namespace ``s``)."""

from amaranth import Cat, Signal

from ahasd.hw.counters import EventCounter
from ahasd.hw.regmap import load

__all__ = ["INTERRUPTS", "queue_counters", "interrupts"]

#: Interrupt sources in INT_STATUS bit order: the field names of INT_STATUS in hw/regs.rdl.
INTERRUPTS = tuple(f.name for f in sorted(load()["INT_STATUS"].fields, key=lambda f: f.lsb))


def queue_counters(m, ctl, regs, s, npu="npu"):
    """Event counters of the three queues (each in the domain of its event, read in ``sync``),
    fill levels and threshold crossings.

    Adds ``s.raw`` (the level of each queue's threshold interrupt, by interrupt name).
    """
    q = ctl._queues
    dq, fq, pq = q.draft, q.feedback, q.preverify
    # `discarded` steps exactly in the cycle after `discarding`: the registered `discarding`
    # is the cycle in which it changed, one flip-flop instead of a 32-bit inequality.
    discarded_step = Signal()
    m.d[npu] += discarded_step.eq(dq.discarding)
    events = {
        "draft_q_pushes": (s.draft_push, "sync"),
        "draft_q_pops": (dq.o_stream.valid & dq.o_stream.ready, npu),
        "draft_q_pushbacks": (ctl.draft_in.valid & ~dq.i_stream.ready, "sync"),
        "feedback_q_pushes": (fq.i_stream.valid & fq.i_stream.ready, npu),
        "feedback_q_pops": (s.fb_pop, "sync"),
        "feedback_q_pushbacks": (fq.i_stream.valid & ~fq.i_stream.ready, npu),
        "preverify_q_pushes": (s.insert, "sync"),
        "preverify_q_pops": (pq.o_stream.valid & pq.o_stream.ready, "sync"),
        "preverify_q_pushbacks": (s.want & ~s.deciding & ~pq.i_stream.ready, "sync"),
        "squashes": (dq.squash & dq.squash_ready, npu),
        "squash_discarded": (discarded_step, npu),
    }
    for name, (event, domain) in events.items():
        counter = EventCounter(width=ctl.counter_bits, domain=domain, read_domain="sync")
        m.submodules[f"count_{name}"] = counter
        m.d.comb += [
            counter.event.eq(event),
            counter.clear.eq(regs.ctrl.clear_counters),
            getattr(regs, name).count.eq(counter.count),
        ]
    fills = {"draft_q": dq.w_level, "feedback_q": fq.r_level, "preverify_q": pq.w_level}
    thresholds = {name: getattr(regs, f"{name}_threshold").threshold for name in fills}
    # The feedback queue's level is a subtraction behind a Gray decode: the FIFO compares its
    # pointers with the threshold itself (no comparator behind the subtraction). The other
    # levels are registers or come from one domain.
    reached = {"feedback_q": q.r_level_at_least("feedback", thresholds["feedback_q"])}
    s.raw = {}
    for (name, fill), depth in zip(fills.items(), ctl.depths):
        status = getattr(regs, f"{name}_status")
        threshold = thresholds[name]
        m.d.comb += [
            status.fill.eq(fill),
            status.empty.eq(fill == 0),
            status.full.eq(fill >= depth),
        ]
        s.raw[name] = Signal(name=f"{name}_over")
        at_least = reached[name] if name in reached else _at_least(fill, threshold)
        m.d.comb += s.raw[name].eq((threshold != 0) & at_least)


def _at_least(fill, threshold):
    """``fill >= threshold``: the threshold's bits above the fill's width are compared with 0
    apart (from registers), so the comparison behind the fill is only as wide as the fill."""
    bits = len(fill)
    if len(threshold) <= bits:
        return fill >= threshold
    return (threshold[bits:] == 0) & (fill >= threshold[:bits])


def interrupts(m, ctl, regs, s):
    """INT_STATUS events, INT_RAW levels, ``irq`` and INT_COUNT, for every interrupt source."""
    tvc = ctl._tvc
    raw = {**s.raw, "edc_stop": s.last_stop, "tvc_insert": s.last_insert,
           "tvc_error": tvc.error_count != 0}
    events = {"edc_stop": s.stop, "tvc_insert": s.insert, "tvc_error": s.tvc_error_event}
    for name in s.raw:
        prev = Signal(name=f"{name}_over_prev")
        m.d.sync += prev.eq(raw[name])
        events[name] = raw[name] & ~prev   # the rising edge: one event per crossing
    if set(events) != set(INTERRUPTS):
        raise AssertionError(f"interrupt sources {sorted(events)} differ from the INT_STATUS "
                             f"fields {sorted(INTERRUPTS)} of hw/regs.rdl")
    for name in INTERRUPTS:
        m.d.comb += [
            getattr(regs.int_status, f"{name}_set").eq(events[name]),
            getattr(regs.int_raw, name).eq(raw[name]),
        ]
    # INT_COUNT takes its increment one cycle late (the events come late in a cycle, an EDC
    # decision's stop, and the counter's enable is then off their path). The clear is not
    # delayed: it drops the increment in flight, and an event in the clear's own cycle is
    # dropped as before, so the count after a clear is the same.
    # Each source's enabled event is registered apart and the registers are ORed after (the
    # same increment in the same cycle as one register of the OR), so a late event (a queue's
    # level against its threshold, an EDC decision) ends in a flip-flop of its own, not in the
    # OR of all sources.
    counted = Signal(len(INTERRUPTS))
    m.d.sync += counted.eq(Cat(*(events[n] & getattr(regs.int_enable, n) for n in INTERRUPTS))
                           & ~regs.ctrl.clear_counters.replicate(len(INTERRUPTS)))
    count_incr = Signal()
    m.d.comb += count_incr.eq(counted.any())
    m.d.comb += [
        ctl.irq.eq(Cat(*(getattr(regs.int_status, n) & getattr(regs.int_enable, n)
                         for n in INTERRUPTS)).any()),
        regs.int_count.count_incr.eq(count_incr),
        regs.int_count.count_clr.eq(regs.ctrl.clear_counters),
    ]
