"""Properties of the rendered Kubernetes manifests (``kubectl kustomize`` of each
overlay, as ``make k8s-validate`` renders them): probes (gRPC health, liveness
apart from readiness; HTTP for the gateway), security, resources, autoscaling,
disruption budgets, network policies, configuration and secrets (no Redis
without a password, dev mode only in the dev overlay)."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from manifests import OVERLAYS as EVERY_KUSTOMIZATION
from manifests import Manifest, render
from truc_game.server import LIVENESS as GAME_LIVENESS
from truc_lobby.server import LIVENESS as LOBBY_LIVENESS

ROOT = Path(__file__).resolve().parents[2]
OVERLAYS = ("overlays/dev", "overlays/prod")
GRPC_PORTS = {"truc-game": 50051, "truc-lobby": 50052, "truc-bots": 50052}
METRICS_PORTS = {"truc-game": 9464, "truc-lobby": 9465, "truc-bots": 9465, "truc-gateway": 9466}
LIVENESS = {"truc-game": GAME_LIVENESS, "truc-lobby": LOBBY_LIVENESS, "truc-bots": LOBBY_LIVENESS}
"""The gRPC health service name each liveness probe asks (the servers' constant)."""
HTTP_PORTS = {"truc-gateway": 8080}
"""Pods probed over HTTP (``/healthz``): the gateway, which has no gRPC."""
CONFIG_OF = {
    "truc-game": ROOT / "services/game/src/truc_game/config.py",
    "truc-lobby": ROOT / "services/lobby/src/truc_lobby/config.py",
    "truc-bots": ROOT / "services/lobby/src/truc_lobby/config.py",
    "truc-gateway": ROOT / "services/gateway/src/truc_gateway/config.py",
}
GRACE_VARIABLE = {
    "truc-game": "TRUC_GRACE_SECONDS",
    "truc-lobby": "TRUC_GRACE_SECONDS",
    "truc-bots": "TRUC_GRACE_SECONDS",
    "truc-gateway": "TRUC_GATEWAY_GRACE_SECONDS",
}
USES_REDIS = {"truc-game", "truc-lobby", "truc-bots"}
"""The pods that hold the JWT key and reach Redis; the gateway does neither."""
NOT_SET_ON_PURPOSE = {
    # An external identity provider is optional (README: how to add its key).
    "TRUC_EXTERNAL_JWT_KEY",
    "TRUC_EXTERNAL_JWT_ALGORITHM",
    "TRUC_EXTERNAL_JWT_ISSUER",
    "TRUC_EXTERNAL_JWT_AUDIENCE",
    # The web app ships inside the gateway's image; another folder is a front-end
    # developer's option, not a deployment's.
    "TRUC_GATEWAY_WEB_DIR",
}
PRESTOP_SECONDS = 5


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


def test_every_grpc_pod_probes_readiness_and_liveness_on_its_grpc_port(
    rendered: list[Manifest],
) -> None:
    deployments = of_kind(rendered, "Deployment")
    assert set(deployments) == set(GRPC_PORTS) | set(HTTP_PORTS)
    for name, grpc_port in GRPC_PORTS.items():
        deployment = deployments[name]
        spec = container(deployment)
        ports = {p["name"]: p["containerPort"] for p in spec["ports"]}
        assert ports == {"grpc": grpc_port, "metrics": METRICS_PORTS[name]}, name
        # Readiness: the whole server's health, NOT_SERVING while Redis is down.
        assert spec["readinessProbe"]["grpc"] == {"port": grpc_port}, name
        # Startup and liveness: the process only, so a Redis outage restarts nothing.
        for probe in ("startupProbe", "livenessProbe"):
            wanted = {"port": grpc_port, "service": LIVENESS[name]}
            assert spec[probe]["grpc"] == wanted, (name, probe)
        env = environment(rendered, deployment)
        prefix = "TRUC_GAME" if name == "truc-game" else "TRUC_LOBBY"
        assert env[f"{prefix}_PORT"] == str(grpc_port)
        assert env[f"{prefix}_HOST"] == "0.0.0.0"


def test_every_pod_declares_its_metrics_port_and_prometheus_annotations(
    rendered: list[Manifest],
) -> None:
    deployments = of_kind(rendered, "Deployment")
    assert set(deployments) == set(METRICS_PORTS)
    for name, port in METRICS_PORTS.items():
        deployment = deployments[name]
        ports = {p["name"]: p["containerPort"] for p in container(deployment)["ports"]}
        assert ports["metrics"] == port, name
        assert environment(rendered, deployment)["TRUC_METRICS_PORT"] == str(port), name
        annotations = deployment["spec"]["template"]["metadata"]["annotations"]
        assert annotations["prometheus.io/scrape"] == "true", name
        assert annotations["prometheus.io/port"] == str(port), name
        assert annotations["prometheus.io/path"] == "/metrics", name


def test_the_gateway_is_probed_over_http_and_forwards_to_the_services(
    rendered: list[Manifest],
) -> None:
    for name, port in HTTP_PORTS.items():
        deployment = of_kind(rendered, "Deployment")[name]
        spec = container(deployment)
        ports = {p["name"]: p["containerPort"] for p in spec["ports"]}
        assert ports == {"http": port, "metrics": METRICS_PORTS[name]}, name
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            check = spec[probe]
            assert "grpc" not in check and "tcpSocket" not in check, (name, probe)
            target = check["httpGet"]["port"]
            assert ports.get(target, target) == port, (name, probe)
            assert check["httpGet"]["path"] == "/healthz", (name, probe)
        env = environment(rendered, deployment)
        assert env["TRUC_GATEWAY_HOST"] == "0.0.0.0"
        assert env["TRUC_GATEWAY_PORT"] == str(port)
        assert {"TRUC_GAME_ADDRESS", "TRUC_LOBBY_ADDRESS"} <= set(env)  # see the next test


def test_callers_spread_over_every_replica_through_headless_services(
    rendered: list[Manifest],
) -> None:
    """The gateway, the lobby and the bots reach the gRPC services by the DNS name of
    a headless Service (every ready pod) with round robin, and the services close
    connections after a while so that clients reach new replicas too."""
    services = of_kind(rendered, "Service")
    deployments = of_kind(rendered, "Deployment")
    callers = {
        "truc-gateway": {"TRUC_GAME_ADDRESS": "truc-game", "TRUC_LOBBY_ADDRESS": "truc-lobby"},
        "truc-lobby": {"TRUC_GAME_ADDRESS": "truc-game"},
        "truc-bots": {"TRUC_GAME_ADDRESS": "truc-game"},
    }
    for caller, targets in callers.items():
        env = environment(rendered, deployments[caller])
        for variable, service in targets.items():
            headless = services[f"{service}-pods"]["spec"]
            assert headless["clusterIP"] == "None"
            assert headless["selector"] == services[service]["spec"]["selector"]
            (port,) = headless["ports"]
            assert env[variable] == f"dns:///{service}-pods:{port['port']}", (caller, variable)
    for name in ("truc-game", "truc-lobby"):
        env = environment(rendered, deployments[name])
        assert int(env["TRUC_MAX_CONNECTION_AGE_SECONDS"]) > 0, name


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
    for name, deployment in of_kind(rendered, "Deployment").items():
        grace = int(environment(rendered, deployment)[GRACE_VARIABLE[name]])
        pre_stop = container(deployment).get("lifecycle", {}).get("preStop")
        if name != "truc-bots":  # the pods behind a Service: drop out of it first
            assert pre_stop["exec"]["command"] == ["sleep", str(PRESTOP_SECONDS)], name
        waits = grace + (PRESTOP_SECONDS if pre_stop else 0)
        assert deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > waits


def test_autoscalers_scale_the_game_and_gateway_deployments_on_cpu(
    rendered: list[Manifest],
) -> None:
    autoscalers = of_kind(rendered, "HorizontalPodAutoscaler")
    targets = set()
    for hpa in autoscalers.values():
        assert hpa["apiVersion"] == "autoscaling/v2"
        target = hpa["spec"]["scaleTargetRef"]
        assert target["kind"] == "Deployment"
        assert target["name"] in of_kind(rendered, "Deployment")
        targets.add(target["name"])
        (metric,) = hpa["spec"]["metrics"]
        assert metric["resource"]["name"] == "cpu"
        assert (
            "cpu"
            in container(of_kind(rendered, "Deployment")[target["name"]])["resources"]["requests"]
        )
        low, high = hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]
        assert low >= 1 and high > low
    assert targets == {"truc-game", "truc-gateway"}


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
    for name, number, kind in (
        ("truc-game", GRPC_PORTS["truc-game"], "grpc"),
        ("truc-lobby", GRPC_PORTS["truc-lobby"], "grpc"),
        ("truc-gateway", HTTP_PORTS["truc-gateway"], "http"),
    ):
        assert services[name]["spec"]["selector"].items() <= pods[name].items()
        (port,) = services[name]["spec"]["ports"]
        assert (port["port"], port["targetPort"]) == (number, kind)
    assert "truc-bots" not in services


def test_each_container_gets_every_setting_of_its_config_module(
    rendered: list[Manifest],
) -> None:
    for name, deployment in of_kind(rendered, "Deployment").items():
        wanted = documented_variables(CONFIG_OF[name]) - NOT_SET_ON_PURPOSE
        env = environment(rendered, deployment)
        assert not wanted - set(env), f"{name} lacks {sorted(wanted - set(env))}"
        if name not in USES_REDIS:  # the gateway: no secret, no Redis
            assert not [v for v in env.values() if isinstance(v, dict)], name
            assert not {"TRUC_JWT_SECRET", "REDIS_URL"} & set(env), name
            continue
        assert env["TRUC_JWT_SECRET"] == {
            "secretKeyRef": {"name": env_secret(env), "key": "jwt-secret"}
        }
        assert env.get("TRUC_DEV_MODE") in ("0", "1")  # which overlay: the next test
        assert env.get("TRUC_ALLOW_FIXED_DEALS", "0") == "0"
    roles = {
        name: environment(rendered, d)["TRUC_LOBBY_ROLE"]
        for name, d in of_kind(rendered, "Deployment").items()
        if name in ("truc-lobby", "truc-bots")
    }
    assert roles == {"truc-lobby": "api", "truc-bots": "bots"}


def test_dev_mode_is_on_in_the_dev_overlay_only() -> None:
    """Outside dev mode a service refuses the dev overlay's committed JWT key
    (truc_service.settings.KNOWN_KEYS), so that overlay says it is development."""
    for overlay, wanted in (("overlays/dev", "1"), ("overlays/prod", "0")):
        manifests = render(overlay)
        for name, deployment in of_kind(manifests, "Deployment").items():
            if name in USES_REDIS:
                assert environment(manifests, deployment)["TRUC_DEV_MODE"] == wanted, overlay


def env_secret(env: dict[str, Any]) -> str:
    name: str = env["TRUC_JWT_SECRET"]["secretKeyRef"]["name"]
    assert name.startswith("truc-jwt")
    return name


def test_no_real_secret_is_shipped() -> None:
    for overlay in ("base", "overlays/prod"):
        assert not of_kind(render(overlay), "Secret"), overlay
    dev = {
        name.rsplit("-", 1)[0]: s for name, s in of_kind(render("overlays/dev"), "Secret").items()
    }
    assert {name: set(s["data"]) for name, s in dev.items()} == {
        "truc-jwt": {"jwt-secret"},
        "truc-redis": {"password"},
    }
    guide = (ROOT / "deploy/k8s/README.md").read_text(encoding="utf-8")
    assert "create secret generic truc-jwt" in guide
    assert "create secret generic truc-redis" in guide


def test_dev_secrets_exist_and_prod_reads_redis_from_a_secret() -> None:
    dev = render("overlays/dev")
    secrets = of_kind(dev, "Secret")
    for name, deployment in of_kind(dev, "Deployment").items():
        if name not in USES_REDIS:
            continue
        ref = environment(dev, deployment)["TRUC_JWT_SECRET"]["secretKeyRef"]
        assert ref["key"] in secrets[ref["name"]]["data"]
        env = environment(dev, deployment)
        assert env["REDIS_URL"] == "redis://:$(REDIS_PASSWORD)@truc-redis:6379/0"
        ref = env["REDIS_PASSWORD"]["secretKeyRef"]
        assert ref["key"] in secrets[ref["name"]]["data"]
    prod = render("overlays/prod")
    for name, deployment in of_kind(prod, "Deployment").items():
        url = environment(prod, deployment).get("REDIS_URL")
        wanted = {"secretKeyRef": {"name": "truc-redis", "key": "url"}}
        assert url == (wanted if name in USES_REDIS else None), name
    assert not of_kind(prod, "StatefulSet"), "prod uses a managed Redis"


def test_redis_is_persistent_and_only_the_services_reach_it() -> None:
    dev = render("overlays/dev")
    (redis,) = of_kind(dev, "StatefulSet").values()
    (claim,) = redis["spec"]["volumeClaimTemplates"]
    mounts = {m["name"]: m["mountPath"] for m in container(redis)["volumeMounts"]}
    assert mounts[claim["metadata"]["name"]] == "/data"
    volumes = {v["name"]: v for v in redis["spec"]["template"]["spec"]["volumes"]}
    conf = config_map(dev, volumes["config"]["configMap"]["name"])
    assert container(redis)["args"][0] == mounts["config"] + "/valkey.conf"
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
    assert pods == USES_REDIS | {"truc-gateway"}
    # Only the pods that use Redis: the gateway, facing the Internet, is kept out.
    assert set(expression["values"]) == USES_REDIS


def redis_containers(manifests: list[Manifest]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every container that runs a Redis-protocol server (valkey or redis image)."""
    for workload in workloads(manifests):
        for spec in workload["spec"]["template"]["spec"]["containers"]:
            if re.search(r"(^|/)(valkey|redis)(:|$)", spec["image"]):
                yield workload["metadata"]["name"], spec


def secret_value(manifests: list[Manifest], ref: dict[str, str]) -> str | None:
    """The value a secretKeyRef names, if the manifests hold that Secret."""
    secret = of_kind(manifests, "Secret").get(ref["name"])
    if secret is None:
        return None  # created by hand, outside the manifests
    return base64.b64decode(secret["data"][ref["key"]]).decode()


@pytest.mark.parametrize("kustomization", EVERY_KUSTOMIZATION)
def test_no_redis_runs_without_a_password(kustomization: str) -> None:
    """Each Redis requires the password of a Secret (``--requirepass`` from an env
    var set from a secretKeyRef), in protected mode, and every service reaching it
    sends that same password in its REDIS_URL."""
    manifests = render(kustomization)
    servers = list(redis_containers(manifests))
    for name, spec in servers:
        args = [*spec.get("command", []), *spec.get("args", [])]
        assert "--requirepass" in args, name
        variable = re.fullmatch(r"\$\((\w+)\)", args[args.index("--requirepass") + 1])
        assert variable, f"{name}: the password must come from an environment variable"
        env = {e["name"]: e for e in spec["env"]}
        ref = env[variable.group(1)]["valueFrom"]["secretKeyRef"]
        value = secret_value(manifests, ref)
        assert value is None or len(value) >= 16, name
        assert env["REDISCLI_AUTH"]["valueFrom"]["secretKeyRef"] == ref, "the probe authenticates"
        conf = "\n".join(
            config_map(manifests, m)["valkey.conf"] for m in _config_maps_of(manifests)
        )
        assert re.search(r"^protected-mode yes$", conf, re.M), name
        assert not re.search(r"^requirepass", conf, re.M), "a password in a ConfigMap"
        for user, deployment in of_kind(manifests, "Deployment").items():
            if user not in USES_REDIS:
                continue
            user_env = environment(manifests, deployment)
            url = user_env["REDIS_URL"]
            if isinstance(url, dict):  # prod-like: the whole URL from a Secret
                assert "secretKeyRef" in url, user
                continue
            found = re.fullmatch(r"redis://:\$\((\w+)\)@truc-redis:6379/0", url)
            assert found, f"{user}: REDIS_URL {url!r} carries no password"
            assert user_env[found.group(1)]["secretKeyRef"] == ref, user
    if kustomization in ("overlays/prod", "base"):
        assert not servers
        for name, deployment in of_kind(manifests, "Deployment").items():
            url = environment(manifests, deployment).get("REDIS_URL")
            assert url is None or isinstance(url, dict), f"{name}: REDIS_URL in plain text"
    else:
        assert servers, kustomization


def _config_maps_of(manifests: list[Manifest]) -> list[str]:
    return [n for n, m in of_kind(manifests, "ConfigMap").items() if "valkey.conf" in m["data"]]


SETTINGS_OF = {
    "truc-game": "truc_game.config",
    "truc-lobby": "truc_lobby.config",
    "truc-bots": "truc_lobby.config",
    "truc-gateway": "truc_gateway.config",
}


def resolved_environment(manifests: list[Manifest], workload: Manifest) -> dict[str, str]:
    """What the container's process sees: Secrets' values (a made-up strong one for
    a Secret created by hand) and ``$(VAR)`` expanded, as the kubelet does."""
    by_hand = {"url": "rediss://:made-by-hand@redis.example:6380/0", "jwt-secret": "k" * 48}
    found: dict[str, str] = {}
    for name, value in environment(manifests, workload).items():
        text = value
        if isinstance(value, dict):
            ref = value["secretKeyRef"]
            text = secret_value(manifests, ref) or by_hand[ref["key"]]
        found[name] = re.sub(r"\$\((\w+)\)", lambda m: found.get(m.group(1), m.group(0)), text)
    return found


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_pod_starts_with_its_configuration(overlay: str) -> None:
    """Each container's environment is a configuration its service accepts: the
    dev overlay's committed key passes because that overlay is in dev mode."""
    import importlib  # noqa: PLC0415 - the services' settings, only here

    manifests = render(overlay)
    for name, deployment in of_kind(manifests, "Deployment").items():
        env = resolved_environment(manifests, deployment)
        settings = importlib.import_module(SETTINGS_OF[name]).Settings.from_env(env)
        if name in USES_REDIS:
            assert "$(" not in env["REDIS_URL"] and "@" in env["REDIS_URL"], name
            assert settings.dev_mode is (overlay == "overlays/dev"), name
