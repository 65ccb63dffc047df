"""One problem on the ticket-desk app of this directory: the API rolled out to a tag never pushed."""

from __future__ import annotations

from sregym.problems.model import BASELINE_KEEP, Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.types import EntityRef, GroundTruth, RootCause

NS = "ticket-desk"


@problem
def api_bad_image_tag() -> Problem:
    """The api Deployment points at `ghcr.io/example/ticket-desk:1.1`, which was never pushed:
    the new pod sits in ErrImagePull/ImagePullBackOff and the rollout never completes."""
    return Problem(
        id="ticket-desk/api-bad-image-tag-v1", title="api rollout stuck on an image update",
        app="ticket-desk", namespace=NS, tags=Tags(layers=("config",), difficulty="easy"),
        faults=(FaultSpec(fault="set_image", params={"namespace": NS, "name": "api",
                                                     "image": "ghcr.io/example/ticket-desk:1.1"}),),
        ground_truth=GroundTruth(
            root_causes=(RootCause(entity=EntityRef(kind="Deployment", namespace=NS, name="api")),),
            mechanism="bad_image", detail="api image set to ghcr.io/example/ticket-desk:1.1, a tag that does not exist",
            detail_keywords=("1.1",), impact_keywords=("failing", "unavailable", "error")),
        mitigation=MitigationSpec(must_fix=(CheckSpec(check="workload_ready", params={"name": "api"}),),
                                  must_keep=BASELINE_KEEP),
        gold=(Action(op="patch", kind="Deployment", namespace=NS, name="api",
                     patch={"spec": {"template": {"spec": {"containers": [
                         {"name": "api", "image": "ghcr.io/example/ticket-desk:1.0"}]}}}}),),
    )
