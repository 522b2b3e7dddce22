"""Properties of the rendered Kubernetes manifests (``kubectl kustomize`` of each
overlay, as ``make k8s-validate`` renders them): probes, security, resources,
autoscaling, disruption budgets, network policies, configuration and secrets."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from manifests import Manifest, render

ROOT = Path(__file__).resolve().parents[2]
OVERLAYS = ("overlays/dev", "overlays/prod")
GRPC_PORTS = {"truc-game": 50051, "truc-lobby": 50052, "truc-bots": 50052}
METRICS_PORTS = {"truc-game": 9464, "truc-lobby": 9465, "truc-bots": 9465}
CONFIG_OF = {
    "truc-game": ROOT / "services/game/src/truc_game/config.py",
    "truc-lobby": ROOT / "services/lobby/src/truc_lobby/config.py",
    "truc-bots": ROOT / "services/lobby/src/truc_lobby/config.py",
}
NOT_SET_ON_PURPOSE = {
    # An external identity provider is optional (README: how to add its key).
    "TRUC_EXTERNAL_JWT_KEY",
    "TRUC_EXTERNAL_JWT_ALGORITHM",
    "TRUC_EXTERNAL_JWT_ISSUER",
    "TRUC_EXTERNAL_JWT_AUDIENCE",
}
PRESTOP_SECONDS = 5
LOBBY_STOP_GRACE = 5  # LobbyServer.stop's default


@pytest.fixture(scope="module", params=OVERLAYS)
def rendered(request: pytest.FixtureRequest) -> list[Manifest]:
    overlay: str = request.param
    return render(overlay)


def of_kind(manifests: list[Manifest], kind: str) -> dict[str, Manifest]:
    return {m["metadata"]["name"]: m for m in manifests if m["kind"] == kind}


def workloads(manifests: list[Manifest]) -> Iterator[Manifest]:
    yield from (m for m in manifests if m["kind"] in ("Deployment", "StatefulSet"))


def container(workload: Manifest) -> dict[str, Any]:
    (only,) = workload["spec"]["template"]["spec"]["containers"]
    result: dict[str, Any] = only
    return result


def config_map(manifests: list[Manifest], ref: str) -> dict[str, str]:
    """The data of the ConfigMap ``ref`` (kustomize's hashed name) names."""
    data: dict[str, str] = of_kind(manifests, "ConfigMap")[ref]["data"]
    return data


def environment(manifests: list[Manifest], workload: Manifest) -> dict[str, Any]:
    """Every variable the container gets: its ConfigMaps, then its own env entries."""
    spec = container(workload)
    found: dict[str, Any] = {}
    for source in spec.get("envFrom", []):
        found.update(config_map(manifests, source["configMapRef"]["name"]))
    for entry in spec.get("env", []):
        found[entry["name"]] = entry.get("value", entry.get("valueFrom"))
    return found


def documented_variables(config: Path) -> set[str]:
    """The variables in the table of a config.py docstring (``_PORT`` continues a prefix)."""
    names: set[str] = set()
    for line in config.read_text(encoding="utf-8").splitlines():
        if not line.startswith("| ``"):
            continue
        previous = ""
        for found in re.findall(r"``([A-Z_]+)``", line.split("|")[1]):
            name = previous.rsplit("_", 1)[0] + found if found.startswith("_") else found
            names.add(name)
            previous = name
    return names


def test_every_service_pod_probes_grpc_health_on_its_grpc_port(rendered: list[Manifest]) -> None:
    deployments = of_kind(rendered, "Deployment")
    assert set(deployments) == set(GRPC_PORTS)
    for name, deployment in deployments.items():
        spec = container(deployment)
        ports = {p["name"]: p["containerPort"] for p in spec["ports"]}
        assert ports == {"grpc": GRPC_PORTS[name], "metrics": METRICS_PORTS[name]}, name
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert spec[probe]["grpc"] == {"port": GRPC_PORTS[name]}, (name, probe)
        env = environment(rendered, deployment)
        prefix = "TRUC_GAME" if name == "truc-game" else "TRUC_LOBBY"
        assert env[f"{prefix}_PORT"] == str(GRPC_PORTS[name])
        assert env[f"{prefix}_HOST"] == "0.0.0.0"
        assert env["TRUC_METRICS_PORT"] == str(METRICS_PORTS[name])
        annotations = deployment["spec"]["template"]["metadata"]["annotations"]
        assert annotations["prometheus.io/scrape"] == "true"
        assert annotations["prometheus.io/port"] == str(METRICS_PORTS[name])


def test_every_pod_is_non_root_read_only_unprivileged_and_limited(
    rendered: list[Manifest],
) -> None:
    for workload in workloads(rendered):
        name = workload["metadata"]["name"]
        pod = workload["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert pod["securityContext"]["runAsUser"] > 0, name
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, name
        assert pod["automountServiceAccountToken"] is False, name
        # A Service named truc-game would otherwise set TRUC_GAME_PORT=tcp://...
        assert pod["enableServiceLinks"] is False, name
        security = container(workload)["securityContext"]
        assert security["allowPrivilegeEscalation"] is False, name
        assert security["readOnlyRootFilesystem"] is True, name
        assert security["capabilities"] == {"drop": ["ALL"]}, name
        resources = container(workload)["resources"]
        for bound in ("requests", "limits"):
            assert set(resources[bound]) == {"cpu", "memory"}, (name, bound)


def test_pods_outlive_their_grace_period(rendered: list[Manifest]) -> None:
    deployments = of_kind(rendered, "Deployment")
    game = deployments["truc-game"]
    grace = int(environment(rendered, game)["TRUC_GRACE_SECONDS"])
    assert game["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > (
        grace + PRESTOP_SECONDS
    )
    assert container(game)["lifecycle"]["preStop"]["exec"]["command"] == [
        "sleep",
        str(PRESTOP_SECONDS),
    ]
    lobby = deployments["truc-lobby"]["spec"]["template"]["spec"]
    assert lobby["terminationGracePeriodSeconds"] > LOBBY_STOP_GRACE + PRESTOP_SECONDS


def test_the_autoscaler_scales_the_game_deployment_on_cpu(rendered: list[Manifest]) -> None:
    (hpa,) = of_kind(rendered, "HorizontalPodAutoscaler").values()
    assert hpa["apiVersion"] == "autoscaling/v2"
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", "truc-game")
    assert "truc-game" in of_kind(rendered, "Deployment")
    (metric,) = hpa["spec"]["metrics"]
    assert metric["resource"]["name"] == "cpu"
    assert (
        hpa["spec"]["minReplicas"] >= 1 and hpa["spec"]["maxReplicas"] > hpa["spec"]["minReplicas"]
    )


def test_budgets_and_services_select_the_pods(rendered: list[Manifest]) -> None:
    pods = {
        name: d["spec"]["template"]["metadata"]["labels"]
        for name, d in of_kind(rendered, "Deployment").items()
    }
    budgets = of_kind(rendered, "PodDisruptionBudget")
    for name, labels in pods.items():
        selector = budgets[name]["spec"]["selector"]["matchLabels"]
        assert selector.items() <= labels.items(), name
    services = of_kind(rendered, "Service")
    for name in ("truc-game", "truc-lobby"):
        assert services[name]["spec"]["selector"].items() <= pods[name].items()
        (port,) = services[name]["spec"]["ports"]
        assert (port["port"], port["targetPort"]) == (GRPC_PORTS[name], "grpc")
    assert "truc-bots" not in services


def test_each_container_gets_every_setting_of_its_config_module(
    rendered: list[Manifest],
) -> None:
    for name, deployment in of_kind(rendered, "Deployment").items():
        wanted = documented_variables(CONFIG_OF[name]) - NOT_SET_ON_PURPOSE
        env = environment(rendered, deployment)
        assert not wanted - set(env), f"{name} lacks {sorted(wanted - set(env))}"
        assert env["TRUC_JWT_SECRET"] == {
            "secretKeyRef": {"name": env_secret(env), "key": "jwt-secret"}
        }
        assert env.get("TRUC_DEV_MODE") == "0" and env.get("TRUC_ALLOW_FIXED_DEALS", "0") == "0"
    roles = {
        name: environment(rendered, d)["TRUC_LOBBY_ROLE"]
        for name, d in of_kind(rendered, "Deployment").items()
        if name != "truc-game"
    }
    assert roles == {"truc-lobby": "api", "truc-bots": "bots"}


def env_secret(env: dict[str, Any]) -> str:
    name: str = env["TRUC_JWT_SECRET"]["secretKeyRef"]["name"]
    assert name.startswith("truc-jwt")
    return name


def test_no_real_secret_is_shipped() -> None:
    for overlay in ("base", "overlays/prod"):
        assert not of_kind(render(overlay), "Secret"), overlay
    (dev,) = of_kind(render("overlays/dev"), "Secret").values()
    assert set(dev["data"]) == {"jwt-secret"}
    guide = (ROOT / "deploy/k8s/README.md").read_text(encoding="utf-8")
    assert "create secret generic truc-jwt" in guide
    assert "create secret generic truc-redis" in guide


def test_dev_secrets_exist_and_prod_reads_redis_from_a_secret() -> None:
    dev = render("overlays/dev")
    secrets = of_kind(dev, "Secret")
    for deployment in of_kind(dev, "Deployment").values():
        ref = environment(dev, deployment)["TRUC_JWT_SECRET"]["secretKeyRef"]
        assert ref["key"] in secrets[ref["name"]]["data"]
        assert environment(dev, deployment)["REDIS_URL"] == "redis://truc-redis:6379/0"
    prod = render("overlays/prod")
    for deployment in of_kind(prod, "Deployment").values():
        url = environment(prod, deployment)["REDIS_URL"]
        assert url == {"secretKeyRef": {"name": "truc-redis", "key": "url"}}
    assert not of_kind(prod, "StatefulSet"), "prod uses a managed Redis"


def test_redis_is_persistent_and_only_the_services_reach_it() -> None:
    dev = render("overlays/dev")
    (redis,) = of_kind(dev, "StatefulSet").values()
    (claim,) = redis["spec"]["volumeClaimTemplates"]
    mounts = {m["name"]: m["mountPath"] for m in container(redis)["volumeMounts"]}
    assert mounts[claim["metadata"]["name"]] == "/data"
    volumes = {v["name"]: v for v in redis["spec"]["template"]["spec"]["volumes"]}
    conf = config_map(dev, volumes["config"]["configMap"]["name"])
    assert container(redis)["command"][-1] == mounts["config"] + "/valkey.conf"
    settings = dict(
        line.split(" ", 1)
        for line in conf["valkey.conf"].splitlines()
        if line and not line.startswith("#")
    )
    assert settings["appendonly"] == "yes" and settings["dir"] == "/data"
    assert settings["maxmemory-policy"] == "noeviction"
    redis_labels = redis["spec"]["template"]["metadata"]["labels"]
    policies = [
        p
        for p in of_kind(dev, "NetworkPolicy").values()
        if p["spec"]["podSelector"]["matchLabels"].items() <= redis_labels.items()
    ]
    deny = [p for p in policies if not p["spec"].get("ingress") and not p["spec"].get("egress")]
    assert deny and set(deny[0]["spec"]["policyTypes"]) == {"Ingress", "Egress"}
    allowed = [rule for p in policies for rule in p["spec"].get("ingress", [])]
    (rule,) = allowed
    assert rule["ports"] == [{"protocol": "TCP", "port": 6379}]
    (peer,) = rule["from"]
    (expression,) = peer["podSelector"]["matchExpressions"]
    pods = {
        d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"]
        for d in of_kind(dev, "Deployment").values()
    }
    assert expression["key"] == "app.kubernetes.io/name" and expression["operator"] == "In"
    assert set(expression["values"]) == pods == {"truc-game", "truc-lobby", "truc-bots"}
