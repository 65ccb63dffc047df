"""Astronomy Shop problems of part 3 (Kubernetes, config and network mechanisms): each ITBench
scenario is one problem rooted in ITBench's v2 ground-truth entities, the itbench-aa suite holds
only scenarios ITBench-AA released, the ITBench 52 pair lets flagd restart before its quota lands,
and nothing an agent reads names the benchmark. The check protocol runs in the registry-wide batch."""

from __future__ import annotations

import json

import pytest

from sregym.faults.builds import FAULTY_BUILDS
from sregym.faults.foreign_arch import ARM64_CHECKOUT
from sregym.problems.catalog.astronomy_shop.common import AA_SUITE_ALSO
from sregym.problems.catalog.astronomy_shop.feature_flags import AA_RELEASED
from sregym.problems.registry import get_problem, select

# ITBench scenario -> (problem, the v2 ground-truth entities as (kind, name))
SCENARIOS = {
    1: ("flag-load-generator-flood-homepage-v1", [("ConfigMap", "flagd-config")]),
    23: ("checkout-arm64-image-v1", [("Deployment", "checkout")]),
    24: ("checkout-catalog-address-v1", [("Deployment", "checkout")]),
    30: ("ad-service-target-port-v1", [("Service", "ad")]),
    31: ("frontend-ingress-policy-v1", [("Deployment", "frontend"), ("NetworkPolicy", "frontend-ingress")]),
    33: ("ad-cart-node-selector-v1", [("Deployment", "ad"), ("Deployment", "cart")]),
    39: ("payment-pinned-node-cordoned-v1", [("Deployment", "payment")]),
    43: ("frontend-dns-policy-v1", [("Deployment", "frontend")]),
    44: ("payment-anti-affinity-v1", [("Deployment", "payment")]),
    45: ("email-init-hang-v1", [("Deployment", "email")]),
    49: ("frontend-readiness-probe-v1", [("Deployment", "frontend")]),
    52: ("checkout-quota-and-homepage-flood-v1", [("ConfigMap", "flagd-config"), ("Deployment", "checkout"),
                                                  ("ResourceQuota", "strict-resource-quota")]),
    58: ("accounting-scaled-to-zero-v1", [("Deployment", "accounting")]),
    59: ("recommendation-init-crash-v1", [("Deployment", "recommendation"),
                                          ("ConfigMap", "recommendation-config")]),
    60: ("recommendation-init-and-checkout-arch-v1", [("Deployment", "recommendation"),
                                                      ("ConfigMap", "recommendation-config"),
                                                      ("Deployment", "checkout")]),
    102: ("ad-resource-quota-v1", [("Deployment", "ad"), ("ResourceQuota", "strict-resource-quota")]),
    114: ("product-catalog-service-deleted-v1", [("Service", "product-catalog")]),
}
FORBIDDEN = ("sregym", "benchmark", "fault", "inject", "itbench", "chaos")


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_scenario_is_rooted_in_itbench_entities(scenario: int) -> None:
    slug, entities = SCENARIOS[scenario]
    p = get_problem(f"astronomy-shop/{slug}")
    assert [(rc.entity.kind, rc.entity.name) for rc in p.ground_truth.root_causes] == entities
    assert f"itbench:{scenario}" in p.tags.sources
    assert ("itbench-aa" in p.suites) == (scenario in AA_RELEASED | AA_SUITE_ALSO | {16, 20, 24, 52, 58, 59})
    # what the agent can read: the title and every object the writes put in the cluster
    visible = (p.title + json.dumps([f.params for f in p.faults])).lower()
    assert not [w for w in FORBIDDEN if w in visible], visible


def test_itbench_aa_suite_holds_released_scenarios_and_the_declared_others() -> None:
    released = AA_RELEASED | {16, 17, 19, 20, 21, 22, 24, 25, 29, 35, 36, 52, 53, 58, 59, 61, 62, 80, 81, 83, 91}
    suite = select(suite="itbench-aa")
    assert len(suite) >= 20
    others = set()
    for p in suite:
        numbers = {int(s.split(":")[1]) for s in p.tags.sources if s.startswith("itbench:")}
        assert numbers, p.id
        if numbers & released:
            assert "itbench-aa" in p.tags.sources, p.id
        else:  # a declared non-released scenario: in the suite, never tagged as released
            assert numbers <= AA_SUITE_ALSO and "itbench-aa" not in p.tags.sources, (p.id, p.tags.sources)
            others |= numbers
    assert others == AA_SUITE_ALSO


def test_quota_pair_restarts_flagd_before_the_quota_lands() -> None:
    """The quota admits no new pod, flagd's restart included: the flag edit and flagd's return
    come first, then the quota and the checkout pod it keeps out; the fix removes the quota first."""
    p = get_problem("astronomy-shop/checkout-quota-and-homepage-flood-v1")
    assert [f.fault for f in p.faults] == ["set_flag_variant", "wait_pod_turnover", "create_objects_recreate_pods"]
    assert p.faults[1].params["label_selector"] == "opentelemetry.io/name=flagd"
    assert [o["kind"] for o in p.faults[2].params["objects"]] == ["ResourceQuota"]
    assert (p.gold[0].op, p.gold[0].kind) == ("delete", "ResourceQuota")
    assert p.tags.layers == ("concurrent",)


def test_arm64_checkout_is_a_build_set_image_can_push() -> None:
    repository, tag = ARM64_CHECKOUT.rsplit(":", 1)
    assert tag in FAULTY_BUILDS[repository].tags
    assert get_problem("astronomy-shop/checkout-arm64-image-v1").faults[0].params["image"] == ARM64_CHECKOUT


def test_lite_gains_astronomy_problems_across_layers() -> None:
    astro = [p for p in select(suite="lite") if p.app == "astronomy-shop"]
    assert 3 <= len(astro) <= 4
    assert len({layer for p in astro for layer in p.tags.layers}) >= 3


def test_missing_env_removes_only_the_cart_address() -> None:
    """SREGym's missing_env_variable scenario: the JSON patch removes CART_ADDR and nothing else."""
    from sregym.problems.catalog.astronomy_shop.common import chart_object

    p = get_problem("astronomy-shop/frontend-cart-address-missing-v1")
    assert "sregym:missing_env_variable_astronomy_shop" in p.tags.sources
    (op,) = p.faults[0].params["patches"][0]["patch"]
    index = int(op["path"].rsplit("/", 1)[1])
    env = chart_object("Deployment", "frontend")["spec"]["template"]["spec"]["containers"][0]["env"]
    assert (op["op"], env[index]["name"]) == ("remove", "CART_ADDR")
    assert [(rc.entity.kind, rc.entity.name) for rc in p.ground_truth.root_causes] == [("Deployment", "frontend")]
