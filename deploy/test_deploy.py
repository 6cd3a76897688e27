"""The deploy/ files are valid and agree with each other and with the proxy.

Kubernetes manifests are checked against the API schemas (kubernetes-validate, strict: an
unknown field fails), then for what a schema cannot see: probes on /healthz, the scrape
annotations on the serving port, selectors that select the Deployment's pods, a grace period
longer than the preStop pause. compose.yaml and haproxy.cfg are read for the same contract;
`haproxy -c` checks the HAProxy file when haproxy is installed (bench/scale needs it anyway).
"""

import pathlib
import shutil
import subprocess

import kubernetes_validate
import pytest
import yaml

HERE = pathlib.Path(__file__).parent
MANIFEST = HERE / "kubernetes" / "toolmend.yaml"
KUBERNETES_VERSION = "1.32"


def resources():
    docs = [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]
    return {d["kind"]: d for d in docs}


def test_every_manifest_matches_the_kubernetes_schema():
    docs = [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]
    assert {d["kind"] for d in docs} == {
        "Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget"}
    for doc in docs:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_a_typo_fails_the_schema_check():
    deployment = resources()["Deployment"]
    deployment["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["periodSecond"] = 5
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSION, strict=True)


def test_the_deployment_probes_health_and_is_scraped_on_its_port():
    deployment = resources()["Deployment"]
    pod = deployment["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    port = {p["name"]: p["containerPort"] for p in container["ports"]}["http"]
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "http"}
    notes = pod["metadata"]["annotations"]
    assert notes["prometheus.io/scrape"] == "true"
    assert notes["prometheus.io/port"] == str(port)
    assert notes["prometheus.io/path"] == "/metrics"
    assert container["resources"]["requests"]["memory"]
    pause = int(container["lifecycle"]["preStop"]["exec"]["command"][-1])
    assert pod["spec"]["terminationGracePeriodSeconds"] > pause


def test_service_autoscaler_and_budget_select_the_deployment():
    r = resources()
    labels = r["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert r["Deployment"]["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert r["Service"]["spec"]["selector"].items() <= labels.items()
    assert r["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"].items() <= labels.items()
    target = r["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", r["Deployment"]["metadata"]["name"])
    assert r["HorizontalPodAutoscaler"]["spec"]["minReplicas"] >= 2


def test_compose_runs_two_replicas_behind_haproxy():
    compose = yaml.safe_load((HERE / "compose.yaml").read_text())
    services = compose["services"]
    replicas = [name for name in services if name.startswith("toolmend-")]
    assert len(replicas) == 2
    for name in replicas:
        assert services[name]["command"][0] == "--upstream"
        assert services[name]["stop_grace_period"]
    haproxy = services["haproxy"]
    assert any(v.startswith("./haproxy.cfg:") for v in haproxy["volumes"])
    config = (HERE / "haproxy.cfg").read_text()
    for name in replicas:
        assert f"server {name} {name}:8080" in config


def test_haproxy_config_checks_health_and_retries_elsewhere():
    lines = [line.split("#")[0].strip() for line in (HERE / "haproxy.cfg").read_text().splitlines()]
    for needed in ("option httpchk GET /healthz", "option redispatch"):
        assert needed in lines
    retry = next(line for line in lines if line.startswith("retry-on "))
    assert "conn-failure" in retry.split()
    assert any(line.startswith("default-server check") for line in lines)


@pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy not installed")
def test_haproxy_accepts_the_config():
    result = subprocess.run(["haproxy", "-c", "-f", str(HERE / "haproxy.cfg")],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
