"""The engine's pre-verification step: TVC's answer is cut to the candidate batch's drafted
tokens (a decider may ask for more than there are), and a pre-verification starts only when it
covers more tokens than the batch already has pre-verified."""

from ahasd.sim.system import engine
from ahasd.sim.system.deciders import Deciders
from ahasd.sim.system.runner import simulate


class Greedy(Deciders):
    """Stops drafting after every second batch (so that the PIM waits and TVC is asked) and
    asks TVC for far more tokens than any batch holds."""

    def __init__(self):
        self.drafts = 0

    def edc_draft(self, entropy_nats):
        self.drafts += 1
        return self.drafts % 2 == 1

    def edc_verify(self, full):
        pass

    def tvc_preset(self, table, cycles, length):
        pass

    def tvc_record(self, table, cycles, length):
        pass

    def tvc_decide(self, kv_len, now, pending):
        return 1000


def test_tvc_answers_are_cut_to_the_candidate(monkeypatch):
    seen = []
    original = engine._Preverifying

    def recording(cand, length, *args, **kwargs):
        seen.append((len(cand.tokens), cand.preverified, length))
        return original(cand, length, *args, **kwargs)

    monkeypatch.setattr(engine, "_Preverifying", recording)
    r = simulate("ahasd", "opt", "adaedl", ablation="tvc", tokens=96, max_files=40,
                 deciders=Greedy())
    assert len(seen) > 3, (r.preverifies, seen)
    # Each pre-verification covers the whole candidate: TVC's 1000 cut to its drafted tokens.
    assert all(length == n and done < n for n, done, length in seen), seen


class Recording(Greedy):
    def __init__(self):
        super().__init__()
        self.records = []

    def tvc_record(self, table, cycles, length):
        self.records.append((table, cycles, length))


def test_gts_switches_and_pvct_records(monkeypatch):
    """Every change of the PIM's task (draft <-> pre-verify, drafting first) is one GTS switch;
    a finished pre-verification records its PIM cycles (positive) and length in PVCT."""
    tasks = []
    drafting, preverifying = engine._Drafting, engine._Preverifying

    class draft(drafting):             # subclasses: the engine checks a task's kind by isinstance
        def __init__(self, *args, **kwargs):
            tasks.append("draft")
            super().__init__(*args, **kwargs)

    class preverify(preverifying):
        def __init__(self, cand, length, t_start, t_done, pj, **kwargs):
            tasks.append(("preverify", length, t_done - t_start))
            super().__init__(cand, length, t_start, t_done, pj, **kwargs)

    monkeypatch.setattr(engine, "_Drafting", draft)
    monkeypatch.setattr(engine, "_Preverifying", preverify)
    d = Recording()
    r = simulate("ahasd", "opt", "adaedl", ablation="tvc", tokens=96, max_files=40, deciders=d)
    kinds = ["draft"] + [t if t == "draft" else "preverify" for t in tasks]
    switches = sum(a != b for a, b in zip(kinds, kinds[1:]))
    assert switches > 4 and r.gts_switches == switches
    pvct = [(c, n) for table, c, n in d.records if table == "pvct"]
    assert len(pvct) == r.preverifies > 0
    assert all(c > 0 for c, _ in pvct)
    assert {n for _, n in pvct} <= {t[1] for t in tasks if t != "draft"}
