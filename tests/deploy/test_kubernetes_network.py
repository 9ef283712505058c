"""The rendered network policies allow exactly the architecture's calls, and the ingress
routes the public API, the console and the receivers, never the admin routes."""

from __future__ import annotations

from typing import Any

from tests.deploy.conftest import HTTP_SERVICES, SERVICES, by_kind
from tests.deploy.manifests import GRPC_PORT, HTTP_PORT, METRICS_PORT, Docs, any_render, matches

NATS_POD = {"app.kubernetes.io/name": "nats", "app.kubernetes.io/component": "nats"}
POSTGRES_POD = {"cnpg.io/cluster": "herald-db", "cnpg.io/instanceRole": "primary"}
INTERNET = "203.0.113.10"  # TEST-NET-3: stands for any public address
PRIVATE = "10.1.2.3"
# Who may open a connection to whom (docs/architecture.md).
CALLS = {
    ("gateway", "router"),
    ("gateway", "ledger"),
    ("gateway", "email-sender"),
    ("gateway", "webhook-sender"),
    ("router", "ledger"),
    ("webhook-sender", "ledger"),
    ("email-sender", "ledger"),
    ("verifier", "ledger"),
}
USES_NATS = {"gateway", "router", "ledger", "webhook-sender", "email-sender", "verifier"}
USES_POSTGRES = {"ledger", "migrate"}
USES_INTERNET = {"webhook-sender", "email-sender"}
PUBLIC = {"gateway", "verifier"}
INGRESS_CONTROLLER = {"app.kubernetes.io/name": "ingress-nginx"}


def test_network_policies_allow_exactly_the_architecture(docs: Docs) -> None:
    net = _Network(docs)
    workloads = [*SERVICES, "migrate"]
    for source in workloads:
        for target in SERVICES:
            allowed = net.allows(source, net.pod(target), GRPC_PORT)
            assert allowed == ((source, target) in CALLS), f"{source} -> {target} gRPC: {allowed}"
        assert net.allows(source, NATS_POD, 4222) == (source in USES_NATS), f"{source} -> NATS"
        assert net.allows(source, POSTGRES_POD, 5432) == (source in USES_POSTGRES), f"{source} -> PostgreSQL"
        assert net.allows_ip(source, INTERNET, 443) == (source in USES_INTERNET), f"{source} -> internet"
        assert not net.allows_ip(source, PRIVATE, 443), f"{source} -> private address"
        assert net.egress_allowed(source, {"k8s-app": "kube-dns"}, 53, namespace="kube-system"), f"{source} DNS"
    for target in SERVICES:
        port = HTTP_PORT if target in HTTP_SERVICES else GRPC_PORT
        assert not net.ingress_allowed(target, None, port), f"outside -> {target} bypassing the ingress controller"
        from_controller = net.ingress_allowed(target, INGRESS_CONTROLLER, port, namespace="ingress-nginx")
        assert from_controller == (target in PUBLIC), f"ingress controller -> {target}:{port}"
        assert not net.ingress_allowed(target, INGRESS_CONTROLLER, METRICS_PORT, namespace="ingress-nginx")
        prometheus = {"app.kubernetes.io/name": "prometheus"}
        assert net.ingress_allowed(target, prometheus, METRICS_PORT, namespace="monitoring"), f"scrape {target}"
        # Anyone else reaches no metrics port.
        assert not net.ingress_allowed(target, net.pod("router"), METRICS_PORT), f"router -> {target} metrics"
    for target in ("router", "ledger", "webhook-sender", "email-sender", "verifier"):
        assert not net.ingress_allowed(target, INGRESS_CONTROLLER, GRPC_PORT, namespace="ingress-nginx"), target


def _ingress_routes(docs: Docs) -> dict[str, tuple[str, str]]:
    ingress = next(d for d in docs if d["kind"] == "Ingress")
    return {
        path["path"]: (path["backend"]["service"]["name"], path["backend"]["service"]["port"]["name"])
        for rule in ingress["spec"]["rules"]
        for path in rule["http"]["paths"]
    }


def test_ingress_routes_the_public_api_console_and_receivers_but_not_admin(docs: Docs) -> None:
    ingresses = [d for d in docs if d["kind"] == "Ingress"]
    assert len(ingresses) == 1 and ingresses[0]["spec"]["ingressClassName"]
    routes = _ingress_routes(docs)
    assert routes == {
        "/v1": ("herald-gateway", "http"),
        "/console": ("herald-gateway", "http"),
        "/inbound": ("herald-verifier", "http"),
    }
    # Prefix matching is by path element: /console does not reach /admin/console (the operator console).
    assert not any(path.startswith("/admin") or path in ("/", "") for path in routes)
    services = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}
    for name, port in routes.values():
        assert port in {p["name"] for p in services[name]["spec"]["ports"]}


def test_prod_ingress_terminates_tls_for_its_host() -> None:
    ingress = next(d for d in any_render("prod") if d["kind"] == "Ingress")
    hosts = [rule["host"] for rule in ingress["spec"]["rules"]]
    assert ingress["spec"]["tls"] == [{"hosts": hosts, "secretName": "herald-tls"}]


class _Network:
    """Just enough NetworkPolicy semantics for Herald's policies (same-namespace pod
    selectors, namespace selectors by name, ipBlocks, numbered and named ports)."""

    def __init__(self, docs: Docs) -> None:
        self.namespace = next(d["metadata"]["namespace"] for d in docs if d["kind"] == "Deployment")
        self.policies = list(by_kind(docs, "NetworkPolicy").values())
        self.templates = {
            d["metadata"]["name"].removeprefix("herald-"): d["spec"]["template"]
            for d in [*by_kind(docs, "Deployment").values(), *by_kind(docs, "Job").values()]
        }

    def pod(self, workload: str) -> dict[str, str]:
        labels: dict[str, str] = self.templates[workload]["metadata"]["labels"]
        return labels

    def _ports(self, labels: dict[str, str]) -> dict[str, int]:
        for template in self.templates.values():
            if template["metadata"]["labels"] == labels:
                return {
                    p["name"]: p["containerPort"] for c in template["spec"]["containers"] for p in c.get("ports", [])
                }
        return {}

    def _selecting(self, labels: dict[str, str], kind: str) -> list[dict[str, Any]]:
        return [
            p
            for p in self.policies
            if kind in p["spec"]["policyTypes"] and matches(p["spec"]["podSelector"].get("matchLabels", {}), labels)
        ]

    @staticmethod
    def _port_ok(rule: dict[str, Any], port: int, named: dict[str, int]) -> bool:
        if "ports" not in rule:
            return True
        return any(named.get(p["port"], p["port"]) == port for p in rule["ports"])

    def _peer_ok(self, peer: dict[str, Any], labels: dict[str, str] | None, namespace: str) -> bool:
        if labels is None or "ipBlock" in peer:
            return False
        if "namespaceSelector" in peer:
            wanted = peer["namespaceSelector"].get("matchLabels", {})
            if wanted.get("kubernetes.io/metadata.name", namespace) != namespace:
                return False
        elif namespace != self.namespace:
            return False
        return matches(peer.get("podSelector", {}).get("matchLabels", {}), labels)

    def egress_allowed(self, source: str, labels: dict[str, str], port: int, namespace: str | None = None) -> bool:
        namespace = namespace or self.namespace
        policies = self._selecting(self.pod(source), "Egress")
        if not policies:
            return True
        named = self._ports(labels)
        return any(
            self._port_ok(rule, port, named) and any(self._peer_ok(peer, labels, namespace) for peer in rule["to"])
            for policy in policies
            for rule in policy["spec"].get("egress", [])
        )

    def ingress_allowed(
        self, target: str, labels: dict[str, str] | None, port: int, namespace: str | None = None
    ) -> bool:
        """labels None: a client outside the cluster (through the ingress controller or a load balancer)."""
        namespace = namespace or self.namespace
        target_labels = self.pod(target)
        policies = self._selecting(target_labels, "Ingress")
        if not policies:
            return True
        named = self._ports(target_labels)
        for policy in policies:
            for rule in policy["spec"].get("ingress", []):
                if not self._port_ok(rule, port, named):
                    continue
                if "from" not in rule or any(self._peer_ok(peer, labels, namespace) for peer in rule["from"]):
                    return True
        return False

    def allows(self, source: str, target_labels: dict[str, str], port: int) -> bool:
        if not self.egress_allowed(source, target_labels, port):
            return False
        herald = {name: labels for name, labels in ((n, self.pod(n)) for n in self.templates)}
        for name, labels in herald.items():
            if labels == target_labels:
                return self.ingress_allowed(name, self.pod(source), port)
        return True  # NATS and PostgreSQL keep their own installers' policies

    def allows_ip(self, source: str, address: str, port: int) -> bool:
        import ipaddress

        ip = ipaddress.ip_address(address)
        for policy in self._selecting(self.pod(source), "Egress"):
            for rule in policy["spec"].get("egress", []):
                if not self._port_ok(rule, port, {}):
                    continue
                for peer in rule.get("to", []):
                    block = peer.get("ipBlock")
                    if not block or ip.version != ipaddress.ip_network(block["cidr"]).version:
                        continue
                    inside = ip in ipaddress.ip_network(block["cidr"])
                    excluded = any(ip in ipaddress.ip_network(c) for c in block.get("except", []))
                    if inside and not excluded:
                        return True
        return False
