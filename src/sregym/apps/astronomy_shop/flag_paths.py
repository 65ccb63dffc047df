"""The demo's feature-flag checks (opentelemetry-demo 2.2.0), service by service, as data.

Why here: each service evaluates its flags through flagd on the requests that check them
(`FLAG_CLIENTS`: flag → the code default of the `get*Value` call), and the branch each flag opens
is what the service's code does (`OPERATION_PATHS`, `PROCESS_PATHS`):

- ad `GetAds`: `adFailure` throws `Status.UNAVAILABLE` on 1 request in 10 (`random.nextInt(10) ==
  0`), logged `GetAds Failed with status ...` at WARN; `adManualGc` runs full GCs in the handler
  (pauses, CPU) after logging its warning; `adHighCpu` starts CPULoad's spinning threads.
- cart `EmptyCart`: `cartFailure` uses the store built on `badhost:1234`, so every EmptyCart fails
  with `FailedPrecondition` "Can't access cart storage"; `failedReadinessProbe` makes the gRPC
  health check answer NOT_SERVING (`HEALTH_FAILS_WHEN`). Chart 0.40.4 gives cart no probe, so
  the pod stays Ready; a gRPC readiness probe someone adds takes it out of the endpoints.
- checkout: `paymentUnreachable` dials `badAddress:50051` (programs.py, a Call gated on the flag),
  `kafkaQueueProblems` is evaluated (its value is a setting for the Kafka producer/consumer code).
- payment `Charge`: `paymentFailure` (a fraction) fails that share of charges with "Payment
  request failed. Invalid token. app.loyalty.level=gold".
- product-catalog `GetProduct`: `productCatalogFailure` fails the requests for product
  `OLJCESPC7Z` (one of the ten products the shop browses) with `Internal`.
- recommendation: `recommendationCacheFailure` grows the cached id list on every cache miss:
  memory and per-request CPU climb.
- email: `emailMemoryLeak` (a multiplier) keeps that many copies of each order's data.
- product-reviews: `llmRateLimitError` gets a 429 from the mock LLM on half the questions and
  answers them with an apology (HTTP 200 at the frontend, the error only in its logs and span);
  `llmInaccurateResponse` is evaluated by product-reviews and by the llm mock itself; with both on
  the answer for L9ECAV7KIM is the mock's inaccurate summary (ai_assistant.py).
- frontend-proxy: `imageSlowLoad` is what the browsers' flagd web provider resolves through
  `/flagservice` (so over frontend-proxy's own flagd connection); ProductCard puts it in
  `x-envoy-fault-delay-request` and Envoy's fault filter holds each image fetch that many ms, at
  most 100 at once (max_active_faults), so the mean pause is capped at 100 / (image rate).
"""

from __future__ import annotations

from sregym.twin.dataplane.codepaths import CodePath
from sregym.twin.dataplane.flag_client import FlagClient
from sregym.twin.dataplane.flag_events import TracesHook
from sregym.twin.dataplane.flagd import FlagServer
from sregym.twin.dataplane.spec import ProgramSpec, Setting

FAILING_PRODUCT = "OLJCESPC7Z"
# openai's RateLimitError text for the llm mock's 429 body (src/llm/app.py)
RATE_LIMIT_ERROR = ("Error code: 429 - {'error': {'message': 'Rate limit reached. Please try again later.', "
                    "'type': 'rate_limit_exceeded', 'param': 'null', 'code': 'null'}}")
PRODUCTS = 10  # the catalogue the load generator browses (init.sql's products)

FLAG_CLIENTS: dict[str, FlagClient] = {
    "ad": FlagClient(flags={"adFailure": "false", "adHighCpu": "false", "adManualGc": "false"}),
    # Program.cs: AddOpenFeature(...AddHook<TraceEnricherHook>()); EmptyCart checks cartFailure
    "cart": FlagClient(flags={"cartFailure": "false", "failedReadinessProbe": "false"}, traces_hook=TracesHook(
        style="dotnet", provider="flagd Provider", operations={"oteldemo.CartService/EmptyCart": ("cartFailure",)})),
    # openfeature.AddHooks(otelhooks.NewTracesHook()): PlaceOrder's span gets one event per evaluation
    "checkout": FlagClient(flags={"paymentUnreachable": "false", "kafkaQueueProblems": "0"},
                           traces_hook=TracesHook(provider="flagd", operations={
                               "oteldemo.CheckoutService/PlaceOrder": ("paymentUnreachable", "kafkaQueueProblems")})),
    "fraud-detection": FlagClient(flags={"kafkaQueueProblems": "0"}),
    "email": FlagClient(flags={"emailMemoryLeak": "0"}),
    "payment": FlagClient(flags={"paymentFailure": "0"}),
    # main.go: openfeature.AddHooks(otelhooks.NewTracesHook()); checkProductFailure evaluates only for
    # OLJCESPC7Z, with GetProduct's context
    "product-catalog": FlagClient(flags={"productCatalogFailure": "false"}, traces_hook=TracesHook(
        provider="flagd", operations={"oteldemo.ProductCatalogService/GetProduct": ("productCatalogFailure",)},
        shares={"oteldemo.ProductCatalogService/GetProduct": 1.0 / PRODUCTS})),
    "recommendation": FlagClient(flags={"recommendationCacheFailure": "false"}),
    "product-reviews": FlagClient(flags={"llmRateLimitError": "false", "llmInaccurateResponse": "false"}),
    # the llm mock's own FlagdProvider check in generate_response (the answer's text: frontend_api.py)
    "llm": FlagClient(flags={"llmInaccurateResponse": "false"}),
    # the browsers' flagd web provider resolves through frontend-proxy's /flagservice route to flagd,
    # i.e. over frontend-proxy's own flagd connection; Envoy logs nothing when that fails
    "frontend-proxy": FlagClient(flags={"imageSlowLoad": "0"}, error_log=""),
}

OPERATION_PATHS: dict[tuple[str, str], tuple[CodePath, ...]] = {
    ("ad", "oteldemo.AdService/GetAds"): (
        CodePath(when="adFailure=true", fail=0.1, error="rpc error: code = Unavailable desc = ",
                 error_class="unavailable", log_level="warn",
                 log="GetAds Failed with status Status{code=UNAVAILABLE, description=null, cause=null}"),
        CodePath(when="adManualGc=true", delay_ms=450.0, cpu_ms=60.0, log_level="warn",
                 log="Feature Flag adManualGc enabled, performing a manual gc now"),
    ),
    ("cart", "oteldemo.CartService/EmptyCart"): (
        CodePath(when="cartFailure=true", fail=1.0, error_class="server_error",
                 error="rpc error: code = FailedPrecondition desc = Can't access cart storage. "
                       "System.ApplicationException: Wasn't able to connect to redis",
                 log="Can't access cart storage. System.ApplicationException: Wasn't able to connect to redis"),
    ),
    ("payment", "oteldemo.PaymentService/Charge"): (
        CodePath(when="paymentFailure!=0", scale="paymentFailure", fail=1.0, error_class="server_error",
                 error="rpc error: code = Unknown desc = Payment request failed. Invalid token. "
                       "app.loyalty.level=gold", log_level="warn",
                 log="Payment request failed. Invalid token. app.loyalty.level=gold"),
    ),
    ("product-catalog", "oteldemo.ProductCatalogService/GetProduct"): (
        CodePath(when="productCatalogFailure=true", fail=1.0 / PRODUCTS, error_class="server_error",
                 error="rpc error: code = Internal desc = Error: Product Catalog Fail Feature Flag Enabled"),
    ),
    ("recommendation", "oteldemo.RecommendationService/ListRecommendations"): (
        CodePath(when="recommendationCacheFailure=true", leak_kib_per_request=64.0, cpu_ms=4.0,
                 log_level="info", log="get_product_list: cache miss"),
    ),
    ("email", "POST /send_order_confirmation"): (
        CodePath(when="emailMemoryLeak!=0", scale="emailMemoryLeak", leak_kib_per_request=16.0),
    ),
    # ProductCard sends `x-envoy-fault-delay-request: <imageSlowLoad>`; the fault filter (header_delay,
    # percentage 100, max_active_faults 100) holds each such request that many ms
    ("frontend-proxy", "/images/products/{picture}"): (
        CodePath(when="imageSlowLoad!=0", scale="imageSlowLoad", delay_per_unit_ms=1.0, max_active=100.0),
    ),
    # get_ai_assistant_response: on half the questions it asks the mock for model
    # `astronomy-llm-rate-limit`, which answers 429; the OpenAI client retries it twice (0.5 s and
    # 1 s backoff, less up to 25 % jitter), then the handler logs the exception, marks its span
    # ERROR and *returns* the apology as the answer: the RPC and the frontend's route succeed (200)
    ("product-reviews", "oteldemo.ProductReviewService/AskProductAIAssistant"): (
        CodePath(when="llmRateLimitError=true", taken=0.5, delay_ms=1310.0, log_level="error",
                 log=f"Caught Exception: {RATE_LIMIT_ERROR}"),
    ),
}

# cart's readinessCheck: Unhealthy("connection failed") ⇒ grpc.health.v1 NOT_SERVING (grpc_health.py)
HEALTH_FAILS_WHEN: dict[str, str] = {"cart": "failedReadinessProbe=true"}

PROCESS_PATHS: dict[str, tuple[CodePath, ...]] = {
    "ad": (CodePath(when="adHighCpu=true", busy_cores=4.0),),
}


def flagd_server(spec: ProgramSpec) -> ProgramSpec:
    """flagd reads its flags from `--uri` (the chart: `file:./etc/flagd/demo.flagd.json`) and also serves
    OFREP on `--ofrep-port` (8016), where the load generator's provider asks."""
    return spec.model_copy(update={"flag_server": FlagServer(extra_ports=("ofrep_port",)),
                                   "settings": {**spec.settings, "uri": Setting(flag="--uri"),
                                                "ofrep_port": Setting(flag="--ofrep-port")},
                                   # zap JSON lines: the message texts, encoded once
                                   "startup": spec.startup.model_copy(update={"logs": (
                                       "Flag IResolver listening at [::]:8013",
                                       "metrics and probes listening at 8014")})})


__all__ = ["FAILING_PRODUCT", "FLAG_CLIENTS", "HEALTH_FAILS_WHEN", "OPERATION_PATHS", "PROCESS_PATHS", "flagd_server"]
