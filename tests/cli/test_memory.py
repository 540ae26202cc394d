"""Bounded memory: replays and ``trace stats`` do not grow with the trace.

Each command runs in a fresh interpreter on a trace and on one ten times larger; peak memory
(the interpreter plus its largest child, the Verilated model) must not grow by more than a
small allowance. The 1 GB runs (under 300 MB) are in ``make regress``.
"""

import pytest

from ahasd.bench.memory import peak_memory_mb
from ahasd.sim.traces.large import decoding_lines, edc_event_lines, tvc_lines, write_lines

#: Allowed growth between the small and the ten-times-larger trace (allocator noise, a larger
#: spool buffer), far below what holding the trace would cost (tens of MB at these sizes).
ALLOWANCE_MB = 6

CASES = {
    "edc replay": (lambda n: edc_event_lines(n, seed=1), 30_000, ["edc", "replay"]),
    "tvc replay": (lambda n: tvc_lines(n // 2, seed=1), 30_000, ["tvc", "replay"]),
    "trace stats": (lambda n: decoding_lines(n // 3, seed=1), 30_000, ["trace", "stats"]),
}


def growth(tmp_path, lines, n, argv, stdin=False):
    peaks, sizes = [], []
    for scale in (1, 10):
        path = tmp_path / f"trace{scale}.jsonl"
        sizes.append(write_lines(path, lines(n * scale)))
        if stdin:
            peaks.append(peak_memory_mb(argv + ["-"], stdin=path)["peak_mb"])
        else:
            peaks.append(peak_memory_mb(argv + [path])["peak_mb"])
        path.unlink()
    return peaks, sizes


#: A decoding trace's last line holds every output token; reading it costs about this much per
#: token (the line's bytes and text, and the parsed list), the one part that grows.
END_LINE_BYTES_PER_TOKEN = 32


def output_tokens(path):
    import json
    with open(path, "rb") as f:
        return json.loads(f.readline())["tokens"]


def allowance_mb(tmp_path, name):
    lines, n, _ = CASES[name]
    allowance = ALLOWANCE_MB
    if name == "trace stats":
        small, large = (write_lines(tmp_path / f"{m}.jsonl", lines(n * m)) and
                        output_tokens(tmp_path / f"{m}.jsonl") for m in (1, 10))
        allowance += (large - small) * END_LINE_BYTES_PER_TOKEN / 2**20
    return allowance


@pytest.mark.parametrize("name", CASES)
def test_golden_paths_do_not_grow(tmp_path, name):
    lines, n, argv = CASES[name]
    peaks, sizes = growth(tmp_path, lines, n, argv)
    assert sizes[1] > 5_000_000
    allowance = allowance_mb(tmp_path, name)
    assert peaks[1] - peaks[0] <= allowance, (name, peaks, sizes, allowance)


@pytest.mark.parametrize("name", ["edc replay", "trace stats"])
def test_stdin_is_spooled_not_held(tmp_path, name):
    """``-``: standard input is copied to a temporary file for the two passes, not held."""
    lines, n, argv = CASES[name]
    peaks, _ = growth(tmp_path, lines, n, argv, stdin=True)
    assert peaks[1] - peaks[0] <= allowance_mb(tmp_path, name), peaks


@pytest.mark.slow
@pytest.mark.parametrize("name", ["edc replay", "tvc replay"])
def test_rtl_paths_do_not_grow(tmp_path, name):
    lines, n, argv = CASES[name]
    peak_memory_mb(argv + ["--rtl", "/dev/null"])          # build (or find) the model first
    # The smaller trace already fills several of the harness's batches (CHUNK events, the
    # memory a replay holds), so only growth with the trace can show.
    peaks, _ = growth(tmp_path, lines, 3 * n, argv + ["--rtl"])
    print(f"{name} --rtl: peak {peaks[0]:.0f} MB, ten times the trace {peaks[1]:.0f} MB")
    assert peaks[1] - peaks[0] <= ALLOWANCE_MB, (name, peaks)


GB = 1 << 30
#: The memory bound of a replay of a 1 GB trace, child processes included.
LIMIT_MB = 300


def write_gb(path, lines_of):
    """Write about 1 GB of trace lines (``lines_of(n)``, scaled until the size is reached)."""
    with open(path, "w", encoding="utf-8") as f:
        size = 0
        for line in lines_of():
            f.write(line)
            size += len(line)
            if size >= GB:
                break
    return size


REGRESS = {
    "edc replay": (lambda: edc_event_lines(10**9, seed=3), ["edc", "replay"]),
    "edc replay --rtl": (lambda: edc_event_lines(10**9, seed=3), ["edc", "replay", "--rtl"]),
    "tvc replay": (lambda: tvc_lines(10**9, seed=3), ["tvc", "replay"]),
    "tvc replay --rtl": (lambda: tvc_lines(10**9, seed=3), ["tvc", "replay", "--rtl"]),
}


@pytest.mark.regress
@pytest.mark.parametrize("name", REGRESS)
def test_one_gigabyte_replay_under_300_mb(tmp_path, name):
    lines_of, argv = REGRESS[name]
    path = tmp_path / "big.jsonl"
    assert write_gb(path, lines_of) >= GB
    figures = peak_memory_mb(argv + [path])
    print(f"{name}: peak {figures['peak_mb']:.0f} MB (self {figures['self_mb']:.0f}, "
          f"children {figures['children_mb']:.0f})")
    assert figures["peak_mb"] < LIMIT_MB, figures


@pytest.mark.regress
def test_one_gigabyte_trace_stats_under_300_mb(tmp_path):
    """A synthetic decoding trace of 1 GB (its end line holds every output token: the one
    line that costs memory, see END_LINE_BYTES_PER_TOKEN)."""
    path = tmp_path / "big.jsonl"
    # Look-ahead of 8 batches squashed on rejections: about 460 bytes per output token, so the
    # end line stays within the line limit.
    sample = sum(map(len, decoding_lines(1000, seed=3, lookahead=8))) / 1000
    size = write_lines(path, decoding_lines(int(GB / sample) + 1000, seed=3, lookahead=8))
    assert size >= 0.9 * GB
    figures = peak_memory_mb(["trace", "stats", "--json", path])
    print(f"trace stats: {size / GB:.2f} GB, peak {figures['peak_mb']:.0f} MB")
    assert figures["peak_mb"] < LIMIT_MB, figures
