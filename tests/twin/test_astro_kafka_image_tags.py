"""One repository, several Dockerfiles: the demo's `<v>-kafka` tag is built FROM apache/kafka
while its other tags run the demo's services, so the catalogue keeps a tag's own start config."""

from __future__ import annotations

from sregym.twin.node.images import ImageSpec, catalogue_of, lookup
from sregym.twin.twin import Twin


def _main(call: object) -> None:  # pragma: no cover - never started here
    return None


def test_a_tag_pushed_with_its_own_start_config_keeps_it() -> None:
    from sregym.twin.datastores.kafka_image import DEMO_ENV, kafka_image

    twin = Twin(seed=1)
    catalogue = catalogue_of(twin)
    repo = "ghcr.io/example/demo"
    catalogue.register(ImageSpec(repo, ("1.0-cart", "1.0-kafka"), extras={"main": _main}))
    catalogue.register(kafka_image(repo, ("1.0-kafka",), kafka_env=DEMO_ENV))
    catalogue.register(ImageSpec(repo, ("1.0-email",)))  # more tags, no config of their own
    kafka, _ = lookup(f"{repo}:1.0-kafka", twin)
    cart, _ = lookup(f"{repo}:1.0-cart", twin)
    email, _ = lookup(f"{repo}:1.0-email", twin)
    assert kafka is not None and kafka.entrypoint == ("/__cacert_entrypoint.sh",)
    assert kafka.extras["datastore"] == "kafka" and kafka.extras["kafka_env"]["CLUSTER_ID"]
    assert cart is not None and cart.entrypoint == () and cart.extras["main"] is _main
    assert "datastore" not in cart.extras and email is cart
    assert set(catalogue.get(repo).tags) == {"1.0-cart", "1.0-kafka", "1.0-email"}  # type: ignore[union-attr]
    assert lookup(f"{repo}:1.0-kafka", Twin(seed=2))[0] is None  # another twin saw no push


def test_a_marker_push_still_extends_the_base_image() -> None:
    """A push without a start config (a datastore marker, more tags) merges as before."""
    twin = Twin(seed=1)
    catalogue = catalogue_of(twin)
    catalogue.register(ImageSpec("docker.io/library/postgres", ("17.99",), extras={"datastore": "postgres"}))
    spec, _ = lookup("postgres:17.99", twin)
    assert spec is not None and spec.entrypoint == ("docker-entrypoint.sh",) and spec.extras["datastore"] == "postgres"
