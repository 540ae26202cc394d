"""``fpga --readme`` rewrites the rows of the blocks it built and keeps the table's other rows
(so a variant built with ``--param --name`` sits beside the defaults); ``merge_table_rows`` at
its rules: replaced in place, appended, kept, and a changed header replacing the table."""

import pytest

from ahasd.readme import merge_table_rows, update_table_rows

OLD = "| block | MHz |\n|:---|---:|\n| a | 1 |\n| b | 2 |\n| v | 9 |"


def test_rows_are_replaced_in_place_appended_and_kept():
    new = "| block | MHz |\n|:---|---:|\n| b | 20 |\n| c | 3 |"
    assert merge_table_rows(OLD, new) == ("| block | MHz |\n|:---|---:|\n| a | 1 |\n| b | 20 |\n"
                                          "| v | 9 |\n| c | 3 |")


def test_rows_keyed_by_two_cells_keep_another_part_beside():
    old = "| block | part | MHz |\n|:---|---:|---:|\n| c | P | 1 |\n| d | P | 2 |"
    new = "| block | part | MHz |\n|:---|---:|---:|\n| c | P-8 | 5 |\n| d | P | 7 |"
    assert merge_table_rows(old, new, key_cells=2) == (
        "| block | part | MHz |\n|:---|---:|---:|\n| c | P | 1 |\n| d | P | 7 |\n| c | P-8 | 5 |")
    assert merge_table_rows(old, new) == "| block | part | MHz |\n|:---|---:|---:|\n| c | P-8 | 5 |\n| d | P | 7 |"
    with pytest.raises(ValueError, match="key_cells must be at least 1, not 0"):
        merge_table_rows(old, new, key_cells=0)


def test_another_header_replaces_the_table():
    new = "| block | MHz (target 90) |\n|:---|---:|\n| b | 20 |"
    assert merge_table_rows(OLD, new) == new
    assert merge_table_rows("", new) == new          # an empty section


def test_update_keeps_the_text_around_the_section(tmp_path):
    readme = tmp_path / "README"
    readme.write_text(f"x\n<!-- t: begin (generated) -->\n{OLD}\n<!-- t: end -->\ny\n")
    assert update_table_rows(readme, "t", "| block | MHz |\n|:---|---:|\n| a | 10 |")
    assert readme.read_text() == ("x\n<!-- t: begin (generated) -->\n| block | MHz |\n|:---|---:|\n"
                                  "| a | 10 |\n| b | 2 |\n| v | 9 |\n<!-- t: end -->\ny\n")
