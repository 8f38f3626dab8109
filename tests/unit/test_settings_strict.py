"""Settings are typed strictly and a misspelt key gets the nearest known one."""

import os

import pytest

from pipeline.base.settings import SettingsError, load_settings


def settings_file(tmp_path, text):
    path = tmp_path / "s.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_number_written_as_text_is_refused(tmp_path):
    with pytest.raises(SettingsError) as err:
        load_settings(settings_file(tmp_path, '[review]\nrate_per_hour_usd = "95"\n'))
    assert "review.rate_per_hour_usd: '95' is not valid" in str(err.value)
    assert "without quotes (95 rather than '95')" in str(err.value)


def test_a_number_written_as_a_number_is_taken_exactly(tmp_path):
    from decimal import Decimal

    s = load_settings(settings_file(tmp_path, "[review]\nrate_per_hour_usd = 95.5\n"))
    assert s.review_rate_per_hour_usd == Decimal("95.5")


@pytest.mark.parametrize(
    "text, hint",
    [
        ("[review]\nrate_per_hour = 60\n", "did you mean review.rate_per_hour_usd?"),
        ("[reconciliation]\ntolerance_percent = 2\n", "did you mean reconciliation.tolerance_pct?"),
        ("[slo]\nzzz = 1\n", "[slo] has api_ms, self_hosted_ms"),
        ("[nothing_like_it]\nzzz = 1\n", "the sections are "),
    ],
)
def test_an_unknown_key_names_the_nearest_one(tmp_path, text, hint):
    with pytest.raises(SettingsError) as err:
        load_settings(settings_file(tmp_path, text))
    assert "unknown setting" in str(err.value) and hint in str(err.value)
    assert "known:" not in str(err.value)  # not a list of every key


@pytest.mark.parametrize("value", ["-1", '"two"', "1.5", "true"])
def test_threads_must_be_a_whole_number_of_at_least_zero(tmp_path, value):
    with pytest.raises(SettingsError) as err:
        load_settings(settings_file(tmp_path, f"[ledger]\nthreads = {value}\n"))
    assert "ledger.threads" in str(err.value) and "0 for one per core" in str(err.value)


def test_the_ledgers_writer_uses_the_threads_it_is_given(tmp_path):
    from pipeline.storage.store import Store

    store = Store.for_db(tmp_path / "l.duckdb")
    for text, expected in (("[ledger]\nthreads = 1\n", 1), ("", None)):
        s = load_settings(settings_file(tmp_path, text))
        con = store.open_work(s)
        try:
            threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
        finally:
            store.close_work(con, s)
        # 0 (the default) leaves DuckDB's own choice: one thread per core the process may use
        assert threads == (expected or len(os.sched_getaffinity(0)))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[business]\ncontrol_requirements = ["residency"]\n', "names among data_residency, isolation"),
        ('[business]\ncontrol_requirements = "isolation"\n', 'a list of names, e.g. ["a", "b"]'),
        ('[business]\nmodel_as_a_service = "yes"\n', "true or false"),
        ("[capacity]\nlatency_headroom = 1.5\n", "a share between 0 and 1"),
    ],
)
def test_business_and_capacity_settings_are_checked(tmp_path, text, expected):
    with pytest.raises(SettingsError) as err:
        load_settings(settings_file(tmp_path, text))
    assert expected in str(err.value)


def test_control_requirements_and_the_service_flag_load_as_written(tmp_path):
    text = '[business]\ncontrol_requirements = ["isolation", "data_residency"]\nmodel_as_a_service = true\n'
    s = load_settings(settings_file(tmp_path, text))
    assert s.business_control_requirements == ("isolation", "data_residency")
    assert s.business_model_as_a_service is True
    # an empty list is none
    assert (
        load_settings(settings_file(tmp_path, "[business]\ncontrol_requirements = []\n")).business_control_requirements
        == ()
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[energy]\npue = 0.9\n", "energy.pue: "),  # a site draws at least what its GPUs draw
        ("[energy]\npue = 3.5\n", "energy.pue: "),
        ("[energy]\nusd_per_kwh = -0.1\n", "energy.usd_per_kwh: "),
        ('[[metrics_clusters]]\nlabel = "Hostname"\nvalue = "n1"\n', "metrics_clusters[0]: must be a table of label"),
        ('[[metrics_clusters]]\nlabel = "Hostname"\nvalue = ""\ncluster_id = "c1"\n', "non-empty strings"),
    ],
)
def test_energy_and_metrics_cluster_settings_are_checked(tmp_path, text, expected):
    with pytest.raises(SettingsError) as err:
        load_settings(settings_file(tmp_path, text))
    assert expected in str(err.value)


def test_metrics_clusters_load_in_order(tmp_path):
    text = "".join(
        f'[[metrics_clusters]]\nlabel = "Hostname"\nvalue = "{host}"\ncluster_id = "{cluster}"\n'
        for host, cluster in (("n1", "c1"), ("n2", "c2"))
    )
    s = load_settings(settings_file(tmp_path, text))
    assert [(m.label, m.value, m.cluster_id) for m in s.metrics_clusters] == [
        ("Hostname", "n1", "c1"),
        ("Hostname", "n2", "c2"),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[[budgets]]\nteam = "a"\n', "budgets[0]: must be a table of team, usd"),
        ('[[budgets]]\nteam = "a"\nusd = 10\nroute = "gpu"\n', "route must be one of api, self_hosted, both"),
        ('[[budgets]]\nteam = "a"\nusd = -1\n', "budgets[0]: usd: a finite, non-negative number"),
        ('[[budgets]]\nteam = "a"\nusd = "10"\n', "budgets[0]: usd:"),
        ('[[budgets]]\nteam = "a"\nusd = 10\n[[budgets]]\nteam = "a"\nusd = 20\nroute = "both"\n', "two budgets"),
    ],
)
def test_budgets_are_checked(tmp_path, text, expected):
    with pytest.raises(SettingsError) as err:
        load_settings(settings_file(tmp_path, text))
    assert expected in str(err.value)


@pytest.mark.parametrize(
    "value", ['"http://spark.internal:15002"', '"spark.internal:15002"', '"sc://"', '"sc://host:port"', "15002"]
)
def test_a_spark_connect_address_must_be_an_sc_url_with_a_host(tmp_path, value):
    with pytest.raises(SettingsError) as err:
        load_settings(settings_file(tmp_path, f"[engine]\nspark_remote = {value}\n"))
    assert "engine.spark_remote" in str(err.value) and "sc://host:port" in str(err.value)


def test_a_spark_connect_address_loads_as_written(tmp_path):
    s = load_settings(settings_file(tmp_path, '[engine]\nspark_remote = "sc://spark.internal:15002/;token=abc"\n'))
    assert s.engine_spark_remote == "sc://spark.internal:15002/;token=abc"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('"gs://ledger-lake/a"', "an s3:// URL of a bucket and folder"),
        ('"ledger-lake/a"', "an s3:// URL of a bucket and folder"),
        ('"s3://"', "an s3:// URL of a bucket and folder"),
        ("42", "an s3:// URL of a bucket and folder"),
        # credentials in the URL: they belong to the AWS environment, never to the settings file
        ('"s3://AKIAEXAMPLE:secret@ledger-lake/a"', "never from the settings file"),
        ('"s3://ledger-lake/a?endpoint_override=localhost:9000"', "never from the settings file"),
    ],
)
def test_a_lake_in_object_storage_must_be_an_s3_url_without_credentials(tmp_path, value, expected):
    with pytest.raises(SettingsError) as err:
        load_settings(settings_file(tmp_path, f"[lake]\nuri = {value}\n"))
    assert "lake.uri" in str(err.value) and expected in str(err.value)


def test_a_lake_in_object_storage_loads_without_its_closing_slash(tmp_path):
    assert load_settings(settings_file(tmp_path, '[lake]\nuri = "s3://ledger-lake/team-a/"\n')).lake_uri == (
        "s3://ledger-lake/team-a"
    )


def test_a_settings_file_nested_past_any_reading_is_a_settings_error(tmp_path):
    from tests.conftest import cli

    # 5,000 tables inside tables, written inline: Python's TOML reader recurses once per level
    path = settings_file(tmp_path, "x = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n")
    with pytest.raises(SettingsError) as err:
        load_settings(path)
    assert "nested too deeply to read" in str(err.value)
    res = cli("settings", "--settings", path)
    assert res.exit_code == 2 and "please report" not in res.output and "RecursionError" not in res.output


def test_one_series_mapped_to_two_clusters_is_a_settings_error(tmp_path):
    text = (
        '[[metrics_clusters]]\nlabel = "Hostname"\nvalue = "node-1"\ncluster_id = "a"\n\n'
        '[[metrics_clusters]]\nlabel = "Hostname"\nvalue = "node-1"\ncluster_id = "b"\n'
    )
    with pytest.raises(SettingsError) as err:
        load_settings(settings_file(tmp_path, text))
    assert "Hostname = 'node-1' is mapped to two clusters, 'a' and 'b'" in str(err.value)
    # the same mapping twice is no contradiction
    same = text.replace('cluster_id = "b"', 'cluster_id = "a"')
    assert len(load_settings(settings_file(tmp_path, same)).metrics_clusters) == 2


@pytest.mark.parametrize("text", ["[planning]\nnode_month_usd = 1e30\n", "[review]\nrate_per_hour_usd = 1e13\n"])
def test_a_money_setting_past_the_money_bound_is_refused(tmp_path, text):
    with pytest.raises(SettingsError) as err:
        load_settings(settings_file(tmp_path, text))
    assert "at most 1,000,000,000,000" in str(err.value)
