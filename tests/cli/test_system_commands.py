"""``ahasd simulate`` / ``sweep``: JSON keys, outputs, one-line errors (exit 2)."""

import json

import pytest

from ahasd.cli import main


def sim(capsys, *argv):
    status = main(["simulate", *argv])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_simulate_json_keys(capsys):
    status, out, _ = sim(capsys, "--pair", "opt", "--system", "ahasd", "--policy", "svip",
                         "--tokens", "32", "--json", "--set", "npu.int8_tops=20")
    assert status == 0
    d = json.loads(out)
    assert list(d)[:10] == ["tokens", "time_s", "throughput_tok_s", "energy_mj", "tokens_per_mj",
                            "acceptance_rate", "mean_accepted_len", "devices", "bound_tok_s",
                            "config"]
    assert set(d["devices"]) == {"npu", "pim"}
    assert set(d["devices"]["npu"]) == {"busy_s", "idle_s", "stall_memory_s"}
    for dev in d["devices"].values():
        assert dev["busy_s"] + dev["idle_s"] == pytest.approx(d["time_s"])
        assert 0 <= dev["stall_memory_s"] <= dev["busy_s"]
    assert set(d["derived"]) >= {"pim_mac_per_s", "npu_verify_pass_s", "pim_draft_token_s"}
    assert d["memory"]["placement"] == "striped" and d["memory"]["contention"] is True
    assert d["config"]["npu"]["int8_tops"] == 20
    assert d["throughput_tok_s"] <= d["bound_tok_s"]


def test_simulate_text(capsys):
    status, out, _ = sim(capsys, "--system", "gpu", "--tokens", "16")
    assert status == 0 and "GPU-only on opt" in out and "tok/s" in out


@pytest.mark.parametrize("argv,message", [
    (["--pair", "gpt"], "--pair must be one of opt, llama2, palm, palm30, qwen3, not 'gpt'"),
    (["--policy", "greedy"], "--policy must be one of fixed, specdecpp, svip, adaedl, "
                             "banditspec, not 'greedy'"),
    (["--system", "tpu"], "--system must be one of gpu, phone-gpu, specpim, npu-lpddr5, ahasd"),
    (["--ablation", "x"], "--ablation must be one of async, aau, edc, tvc, not 'x'"),
    (["--edc", "x"], "--edc must be one of committed, anchor, not 'x'"),
    (["--tokens", "0"], "argument --tokens: must be an integer in 1..100000, not 0"),
    (["--set", "pim.bogus=1"], "unknown key pim.bogus"),
    (["--set", "gpu.mem_bw_gbps=-3"], "gpu.mem_bw_gbps must be > 0, not -3"),
    (["--set", "npu.bw_util=2"], "npu.bw_util must be in (0, 1], not 2"),
    (["--acceptance-pair", "big"], "--acceptance-pair must be one of ngram3-5, ngram4-5, "
                                    "ngram5-5h, ngram5-5b, ngram5-5x, low, high, not 'big'"),
    (["--pair", "llama2", "--system", "gpu", "--tokens", "8"],
     "do not fit the 16.0 GB of gpu; use --offload"),
])
def test_simulate_errors(capsys, argv, message):
    status, _, err = sim(capsys, *argv)
    assert status == 2
    assert err.startswith("ahasd: error: ") and message in err and err.count("\n") == 1


def test_simulate_bad_trace(capsys, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "other"}\n')
    status, _, err = sim(capsys, "--trace", str(bad))
    assert status == 2 and "bad.jsonl: line 1: not an ahasd-trace header" in err
    status, _, err = sim(capsys, "--trace", str(tmp_path / "none.jsonl"))
    assert status == 2 and "cannot read trace" in err


def test_simulate_config_file(capsys, tmp_path):
    from importlib import resources
    good = tmp_path / "p.toml"
    good.write_text(resources.files("ahasd.sim.system").joinpath("configs", "platform.toml")
                    .read_text().replace("offchip_bw_gbps = 51.2", "offchip_bw_gbps = 25.6"))
    status, out, _ = sim(capsys, "--config", str(good), "--tokens", "8", "--json")
    assert status == 0 and json.loads(out)["config"]["pim"]["offchip_bw_gbps"] == 25.6
    bad = tmp_path / "bad.toml"
    bad.write_text("[pim\n")
    status, _, err = sim(capsys, "--config", str(bad))
    assert status == 2 and f"malformed TOML in {bad}" in err
    status, _, err = sim(capsys, "--config", str(tmp_path / "none.toml"))
    assert status == 2 and "cannot read" in err


def test_sweep_command(capsys, tmp_path):
    status = main(["sweep", "--axis", "npu.int8_tops=8,16", "--tokens", "16", "--jobs", "1",
                   "--out", str(tmp_path)])
    assert status == 0 and (tmp_path / "sweep.png").exists()
    assert "2 points" in capsys.readouterr().out
    assert main(["sweep", "--axis", "npu.nope=1", "--out", str(tmp_path)]) == 2
    assert "unknown key npu.nope" in capsys.readouterr().err
