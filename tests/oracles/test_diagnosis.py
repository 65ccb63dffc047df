"""Root-cause precision at full recall and the deterministic checklist."""

from __future__ import annotations

import pytest

from sregym.oracles.checklist import PASS_THRESHOLD
from sregym.oracles.diagnosis import root_cause_score, score_diagnosis
from sregym.problems import get_problem
from sregym.types import DiagnosisSubmission, EntityRef

TRUTH = get_problem("demo-shop/resourcequota-blocks-recreation-v1").ground_truth
IMAGE_TRUTH = get_problem("demo-shop/bad-image-tag-v1").ground_truth


def ref(text: str) -> EntityRef:
    return EntityRef.parse(text)


def test_exact_root_cause_scores_one() -> None:
    sub = DiagnosisSubmission(root_causes=(ref("demo-shop/ResourceQuota/compute-resources"),))
    assert root_cause_score(TRUTH, sub) == (1.0, 1.0, 1.0)


def test_alias_pod_and_replicaset_count_as_the_deployment() -> None:
    sub = DiagnosisSubmission(root_causes=(ref("demo-shop/Pod/catalog-7d9f8b6c5d-x2x4z"),))
    assert root_cause_score(IMAGE_TRUTH, sub)[0] == 1.0
    both = DiagnosisSubmission(root_causes=(ref("demo-shop/deploy/catalog"), ref("demo-shop/rs/catalog-7d9f8b6c5d")))
    assert root_cause_score(IMAGE_TRUTH, both)[0] == 1.0
    other = DiagnosisSubmission(root_causes=(ref("demo-shop/Pod/catalogue-7d9f8b6c5d-x2x4z"),))
    assert root_cause_score(IMAGE_TRUTH, other)[0] == 0.0


def test_missing_root_cause_scores_zero_and_extras_dilute() -> None:
    assert root_cause_score(TRUTH, DiagnosisSubmission(root_causes=(ref("demo-shop/Deployment/catalog"),)))[0] == 0.0
    extra = DiagnosisSubmission(root_causes=(ref("demo-shop/ResourceQuota/compute-resources"),
                                             ref("demo-shop/Deployment/catalog"), ref("demo-shop/Service/frontend")))
    score, recall, precision = root_cause_score(TRUTH, extra)
    assert recall == 1.0 and score == pytest.approx(1 / 3) and precision == pytest.approx(1 / 3)
    assert root_cause_score(TRUTH, DiagnosisSubmission()) == (0.0, 0.0, 0.0)


def test_checklist_right_diagnosis_passes_all_nine() -> None:
    sub = DiagnosisSubmission(
        root_causes=(ref("demo-shop/ResourceQuota/compute-resources"),),
        mechanism="ResourceQuota requires limits.memory and limits.cpu; pods without limits are rejected",
        affected=(ref("demo-shop/Deployment/catalog"),),
        explanation="The quota compute-resources makes admission reject catalog pods (must specify limits.memory), "
                    "so catalog has no ready pods and its Service is unavailable.")
    score = score_diagnosis(TRUTH, sub)
    assert [a.id for a in score.checklist if not a.answer] == []
    assert score.checklist_score == pytest.approx(1.0) and score.passed


def test_checklist_partial_diagnosis() -> None:
    # Right entity, vague mechanism, no impact: localization yes, detail/impact no.
    sub = DiagnosisSubmission(root_causes=(ref("demo-shop/ResourceQuota/compute-resources"),),
                              mechanism="quota problem")
    score = score_diagnosis(TRUTH, sub)
    no = {a.id for a in score.checklist if not a.answer}
    assert no == {"C2", "S2", "S3"}
    assert score.dimension_scores["localization"] == 1.0
    assert score.checklist_score < 1.0


def test_checklist_over_blaming_fails() -> None:
    sub = DiagnosisSubmission(
        root_causes=(ref("demo-shop/Deployment/catalog"), ref("demo-shop/Deployment/frontend"),
                     ref("demo-shop/Deployment/cache")),
        mechanism="crash loop after OOM", affected=(ref("demo-shop/Service/frontend"),),
        explanation="Everything is failing.")
    score = score_diagnosis(TRUTH, sub)
    answers = {a.id: a.answer for a in score.checklist}
    assert not answers["L1"] and not answers["L2"] and not answers["L3"]
    assert not answers["C1"] and not answers["C3"] and not answers["S1"]
    assert score.checklist_score < PASS_THRESHOLD and not score.passed
    assert score.root_cause_score == 0.0


def test_checklist_empty_submission_is_all_no() -> None:
    score = score_diagnosis(TRUTH, DiagnosisSubmission())
    assert all(not a.answer for a in score.checklist) and score.checklist_score == 0.0
    assert score.dimension_scores == {"localization": 0.0, "characterization": 0.0, "scope": 0.0}


def test_entity_parsing_forms() -> None:
    assert ref("demo-shop/deploy/catalog") == EntityRef(kind="Deployment", namespace="demo-shop", name="catalog")
    assert ref("svc:demo-shop/catalog").kind == "Service"
    assert ref("ValidatingWebhookConfiguration/x").namespace is None
    with pytest.raises(ValueError):
        ref("catalog")
