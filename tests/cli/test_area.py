"""``ahasd area``: bad input (moved from tests/synth/test_area_flow.py)."""


def test_cli_anchors_need_all(capsys):
    from ahasd.cli import main
    assert main(["area", "edc", "--anchors"]) == 2
    assert "--anchors needs 'all'" in capsys.readouterr().err
