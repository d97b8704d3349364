"""benchmarks/tables.py writes each table between its markers: always into
the performance page, into the README only where the README shows it."""

from benchmarks.tables import markdown, publish


def test_publish_replaces_between_markers_and_adds_missing_tables(tmp_path, capsys):
    page, readme = tmp_path / "performance.md", tmp_path / "README.md"
    page.write_text("# Performance\n\n<!-- table:a -->\nold\n<!-- /table:a -->\n\ntail\n")
    readme.write_text("intro\n<!-- table:a -->\nold\n<!-- /table:a -->\nend\n")
    publish("a", "new a\n", page=str(page), also=[str(readme)])
    publish("b", "new b", page=str(page), also=[str(readme)])
    assert page.read_text() == ("# Performance\n\n<!-- table:a -->\nnew a\n<!-- /table:a -->\n\ntail\n"
                                "\n<!-- table:b -->\nnew b\n<!-- /table:b -->\n")
    assert readme.read_text() == "intro\n<!-- table:a -->\nnew a\n<!-- /table:a -->\nend\n"
    assert capsys.readouterr().out == "new a\n\nnew b\n"


def test_publish_without_write_only_prints(tmp_path, capsys):
    page = tmp_path / "performance.md"
    publish("a", markdown(["f", "x"], [["g", 1.5]]), write=False, page=str(page), also=())
    assert not page.exists()
    assert capsys.readouterr().out == "| f | x |\n| --- | ---: |\n| g | 1.5 |\n"
