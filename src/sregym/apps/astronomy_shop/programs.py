"""The Astronomy Shop's services (opentelemetry-demo 2.2.0) as data-plane programs.

Each service reads what its code reads: its listen port from `<SERVICE>_PORT`, its peers from the
`*_ADDR` env vars the chart sets (`cart:8080`, `http://shipping:8080`, `QUOTE_ADDR`), flagd from
`FLAGD_HOST`/`FLAGD_PORT`, Valkey from `VALKEY_ADDR`, PostgreSQL from `DB_CONNECTION_STRING`.
Operations carry the demo's names: gRPC methods as its protos name them
(`oteldemo.CartService/GetCart`), HTTP routes as its handlers declare them (`/api/products/{productId}`
on the Next.js frontend, `/get-quote` on shipping, `/getquote` on quote). Costs follow the
language: Envoy and Go are cheap, Node/.NET/Java moderate, Ruby/PHP/Python heavier per request.

Call graph (as the code wires it): frontend-proxy routes `/` to frontend, `/images/` to
image-provider, `/flagservice/` to flagd; frontend → ad, cart, checkout, currency,
product-catalog, product-reviews, recommendation, shipping; checkout → cart, product-catalog,
currency, shipping (→ quote over HTTP), payment, email and Kafka; recommendation →
product-catalog; product-reviews → PostgreSQL, product-catalog and the llm; product-catalog →
PostgreSQL; cart → valkey-cart. Flag evaluations (OpenFeature → flagd) are optional calls: an
SDK falls back to the code default when flagd is unreachable.
"""

from __future__ import annotations

from sregym.apps.astronomy_shop.flag_paths import (
    FLAG_CLIENTS,
    HEALTH_FAILS_WHEN,
    OPERATION_PATHS,
    PROCESS_PATHS,
    flagd_server,
)
from sregym.apps.astronomy_shop.kafka_programs import (
    accounting,
    checkout_kafka,
    flag_setting,
    fraud_detection,
)
from sregym.apps.astronomy_shop.log_channels import sinks as log_sinks
from sregym.twin.dataplane.spec import (
    Call,
    Dependency,
    LogFormat,
    MemoryModel,
    Operation,
    ProgramSpec,
    RetryPolicy,
    Setting,
    Startup,
)

PREFIX = "otel-demo-"  # program registry names (binaries of the demo images)
FLAG_RESOLVE = "flagd.evaluation.v1.Service/ResolveBoolean"
_GRPC = RetryPolicy(timeout=Setting(default="5s"), retries=Setting(default="0"))


def _grpc(name: str, env: str) -> Dependency:
    # The demo's clients set no per-call deadline and no retries (the default policy). The twin
    # also reads `<PEER>_RPC_TIMEOUT` / `<PEER>_RPC_RETRIES` (e.g. PRODUCT_CATALOG_RPC_TIMEOUT=20ms):
    # knobs the real demo does not have, standing for a client interceptor someone configured.
    peer = env.removesuffix("_ADDR")
    policy = RetryPolicy(timeout=Setting(env=f"{peer}_RPC_TIMEOUT", default="5s"),
                         retries=Setting(env=f"{peer}_RPC_RETRIES", default="0"))
    return Dependency(name=name, kind="grpc", address=Setting(env=env), policy=policy,
                      error_log="{error}")


def _http(name: str, env: str, *, port_env: str | None = None, timeout: str = "10s") -> Dependency:
    return Dependency(name=name, kind="http", address=Setting(env=env),
                      port=Setting(env=port_env) if port_env else None,
                      policy=RetryPolicy(timeout=Setting(default=timeout), retries=Setting(default="0")))


def _flagd() -> Dependency:
    return Dependency(name="flagd", kind="grpc", address=Setting(env="FLAGD_HOST", default="flagd"),
                      port=Setting(env="FLAGD_PORT", default="8013"),
                      policy=RetryPolicy(timeout=Setting(default="500ms"), retries=Setting(default="0")))


def _postgres() -> Dependency:
    return Dependency(name="postgres", kind="postgres", address=Setting(env="DB_CONNECTION_STRING"),
                      policy=RetryPolicy(timeout=Setting(default="5s"), retries=Setting(default="0")))


def _flag(probability: float = 1.0) -> Call:
    return Call(dependency="flagd", operation=FLAG_RESOLVE, optional=True, probability=probability)


def _spec(name: str, *, port_env: str | None, default_port: int, ops: tuple[Operation, ...],
          deps: tuple[Dependency, ...] = (), protocol: str = "grpc", memory: float = 40.0,
          style: str = "plain", logs: tuple[str, ...] = (), startup_s: float = 1.0,
          caller: str = "") -> ProgramSpec:
    return ProgramSpec(
        name=PREFIX + name, service_name=name, protocol=protocol,  # type: ignore[arg-type]
        port=Setting(env=port_env, default=str(default_port)) if port_env else Setting(default=str(default_port)),
        operations=ops, dependencies=deps,
        memory=MemoryModel(base_mib=memory, per_inflight_mib=0.1, per_rps_mib=0.05),
        startup=Startup(seconds=startup_s, logs=logs),
        log=LogFormat(style=style, main_caller=caller or name, handler_caller=caller or name,  # type: ignore[arg-type]
                      sinks=log_sinks(name)),  # type: ignore[arg-type]
        grpc_health=protocol == "grpc")


def _frontend_proxy() -> ProgramSpec:
    routes = tuple(Operation(name=op.name, method=op.method, cpu_ms=0.15, weight=op.weight,
                             calls=(Call(dependency="frontend", operation=f"{op.method} {op.name}"),))
                   for op in _frontend().operations)
    extra = (Operation(name="/images/{image}", cpu_ms=0.1, weight=0.0,
                       calls=(Call(dependency="image-provider", operation="GET /images/{image}"),)),
             Operation(name="/images/products/{picture}", cpu_ms=0.1, weight=0.0,  # ProductCard's fetch
                       calls=(Call(dependency="image-provider", operation="GET /images/products/{picture}"),)),
             Operation(name="/flagservice/flagd.evaluation.v1.Service/ResolveAll", method="POST", cpu_ms=0.1,
                       weight=0.0, calls=(Call(dependency="flagd", operation="flagd.evaluation.v1.Service/ResolveAll"),)))
    deps = (_http("frontend", "FRONTEND_HOST", port_env="FRONTEND_PORT", timeout="15s"),
            _http("image-provider", "IMAGE_PROVIDER_HOST", port_env="IMAGE_PROVIDER_PORT"),
            Dependency(name="flagd", kind="grpc", address=Setting(env="FLAGD_HOST"),
                       port=Setting(env="FLAGD_PORT"), policy=_GRPC))
    spec = _spec("frontend-proxy", port_env="ENVOY_PORT", default_port=8080, ops=(*routes, *extra), deps=deps,
                 protocol="http", memory=24.0, style="envoy", caller="main",
                 logs=("[source/server/server.cc:430] initializing epoch 0 (base id=0, hot restart version=11.104)",
                       "[source/server/server.cc:970] starting main dispatch loop"))
    # envoy.tmpl.yaml's admin listener; failed requests show in the access log (envoy.py), not as error lines;
    # an Envoy stream held by the fault filter keeps only its headers: tens of KiB, not a worker's stack
    return spec.model_copy(update={"admin_port": Setting(env="ENVOY_ADMIN_PORT"),
                                   "log": spec.log.model_copy(update={"error_burst": 0}),
                                   "memory": spec.memory.model_copy(update={"per_inflight_mib": 0.02})})


def _frontend() -> ProgramSpec:
    deps = (_grpc("ad", "AD_ADDR"), _grpc("cart", "CART_ADDR"), _grpc("checkout", "CHECKOUT_ADDR"),
            _grpc("currency", "CURRENCY_ADDR"), _grpc("product-catalog", "PRODUCT_CATALOG_ADDR"),
            _grpc("product-reviews", "PRODUCT_REVIEWS_ADDR"), _grpc("recommendation", "RECOMMENDATION_ADDR"),
            _http("shipping", "SHIPPING_ADDR"), _flagd())
    convert = "oteldemo.CurrencyService/Convert"
    ops = (
        Operation(name="/", cpu_ms=6.0, weight=1, response_bytes=24_000),
        Operation(name="/api/products", cpu_ms=2.5, weight=1, response_bytes=6_000, calls=(
            Call(dependency="product-catalog", operation="oteldemo.ProductCatalogService/ListProducts"),
            Call(dependency="currency", operation=convert, count=10.0))),
        Operation(name="/api/products/{productId}", cpu_ms=1.5, weight=10, response_bytes=900, calls=(
            Call(dependency="product-catalog", operation="oteldemo.ProductCatalogService/GetProduct"),
            Call(dependency="currency", operation=convert))),
        Operation(name="/api/recommendations", cpu_ms=2.0, weight=3, calls=(
            Call(dependency="recommendation", operation="oteldemo.RecommendationService/ListRecommendations"),
            Call(dependency="product-catalog", operation="oteldemo.ProductCatalogService/GetProduct", count=4.0),
            Call(dependency="currency", operation=convert, count=4.0))),
        Operation(name="/api/product-reviews/{productId}", cpu_ms=1.2, weight=2, calls=(
            Call(dependency="product-reviews", operation="oteldemo.ProductReviewService/GetProductReviews"),)),
        Operation(name="/api/product-reviews-avg-score/{productId}", cpu_ms=1.0, weight=0.0, calls=(
            Call(dependency="product-reviews",
                 operation="oteldemo.ProductReviewService/GetAverageProductReviewScore"),)),
        Operation(name="/cart", cpu_ms=5.0, weight=0.0, response_bytes=20_000),  # the browsers' documents
        Operation(name="/product/{productId}", cpu_ms=5.0, weight=0.0, response_bytes=20_000),
        Operation(name="/api/product-ask-ai-assistant/{productId}", method="POST", cpu_ms=1.5, weight=1, calls=(
            Call(dependency="product-reviews", operation="oteldemo.ProductReviewService/AskProductAIAssistant"),)),
        Operation(name="/api/data", cpu_ms=1.0, weight=3, calls=(
            Call(dependency="ad", operation="oteldemo.AdService/GetAds"),)),
        Operation(name="/api/cart", cpu_ms=1.2, weight=3, calls=(
            Call(dependency="cart", operation="oteldemo.CartService/GetCart"),
            Call(dependency="product-catalog", operation="oteldemo.ProductCatalogService/GetProduct", count=1.5),
            Call(dependency="currency", operation=convert, count=1.5))),
        Operation(name="/api/cart", method="POST", cpu_ms=1.2, weight=2, calls=(
            Call(dependency="cart", operation="oteldemo.CartService/AddItem"),)),
        Operation(name="/api/checkout", method="POST", cpu_ms=2.0, weight=1, calls=(
            Call(dependency="checkout", operation="oteldemo.CheckoutService/PlaceOrder"),)),
        Operation(name="/api/currency", cpu_ms=0.6, weight=0.1, calls=(
            Call(dependency="currency", operation="oteldemo.CurrencyService/GetSupportedCurrencies"),)),
        Operation(name="/api/shipping", cpu_ms=0.8, weight=0.1, calls=(
            Call(dependency="shipping", operation="POST /get-quote"),
            Call(dependency="currency", operation=convert))),
    )
    return _spec("frontend", port_env="FRONTEND_PORT", default_port=8080, ops=ops, deps=deps, protocol="http",
                 # Next's standalone server prints its banner and console errors as plain text
                 memory=110.0, startup_s=2.0, style="raw", caller="next-server",
                 logs=("   ▲ Next.js 16.1.1", "   - Local:        http://localhost:{port}", "",
                       " ✓ Starting...", " ✓ Ready in 412ms"))  # package.json's next 16.1.1


def _checkout() -> ProgramSpec:
    deps = (_grpc("cart", "CART_ADDR"), _grpc("currency", "CURRENCY_ADDR"), _http("email", "EMAIL_ADDR"),
            _grpc("payment", "PAYMENT_ADDR"), _grpc("product-catalog", "PRODUCT_CATALOG_ADDR"),
            _http("shipping", "SHIPPING_ADDR"), _flagd(),
            # chargeCard's `badAddress := "badAddress:50051"` while paymentUnreachable is on
            Dependency(name="payment-unreachable", kind="grpc", address=Setting(default="badAddress:50051"),
                       policy=_GRPC, error_log="could not charge the card: {error}"))
    kafka, publish = checkout_kafka()  # PlaceOrder publishes the order to `orders` last (kafka_programs.py)
    calls = (
        Call(dependency="cart", operation="oteldemo.CartService/GetCart"),
        Call(dependency="product-catalog", operation="oteldemo.ProductCatalogService/GetProduct", count=1.7),
        Call(dependency="currency", operation="oteldemo.CurrencyService/Convert", count=1.7),
        Call(dependency="shipping", operation="POST /get-quote"),
        Call(dependency="currency", operation="oteldemo.CurrencyService/Convert"),
        Call(dependency="payment", operation="oteldemo.PaymentService/Charge", feature="paymentUnreachable!=true"),
        Call(dependency="payment-unreachable", operation="oteldemo.PaymentService/Charge",
             feature="paymentUnreachable=true"),
        Call(dependency="shipping", operation="POST /ship-order"),
        Call(dependency="cart", operation="oteldemo.CartService/EmptyCart", optional=True),
        Call(dependency="email", operation="POST /send_order_confirmation", optional=True),
        _flag(),
        *publish,
    )
    return _spec("checkout", port_env="CHECKOUT_PORT", default_port=8080, deps=(*deps, kafka), memory=9.0,
                 style="json",
                 caller="main.go", ops=(Operation(name="oteldemo.CheckoutService/PlaceOrder", cpu_ms=1.2,
                                                  calls=calls),),
                 # main.go's otelslog messages (the OTLP record bodies; nothing reaches stdout)
                 logs=("service config: &{{productCatalogSvcAddr:{addr[product-catalog]} cartSvcAddr:{addr[cart]}}}",
                       'starting to listen on tcp: "[::]:{port}"'))


# AdServiceImpl.getAds: `AdService.getInstance()` first, its result dereferenced outside the
# StatusRuntimeException catch, then getAdsByCategory / getRandomAds (JVMChaos targets, jvm_rules.py)
AD_JAVA_METHODS = ("oteldemo.AdService$AdServiceImpl#getAds", "oteldemo.AdService#getInstance",
                   "oteldemo.AdService#getAdsByCategory", "oteldemo.AdService#getRandomAds")


def _simple() -> list[ProgramSpec]:
    catalog_ops = tuple(Operation(name=f"oteldemo.ProductCatalogService/{m}", cpu_ms=c,
                                  calls=(Call(dependency="postgres", operation="select", collection="catalog.products"),
                                         _flag(0.1)))
                        for m, c in (("ListProducts", 0.9), ("GetProduct", 0.4), ("SearchProducts", 0.8)))
    return [
        _spec("ad", port_env="AD_PORT", default_port=8080, deps=(_flagd(),), memory=180.0, startup_s=4.0,
              caller="oteldemo.AdService",
              ops=(Operation(name="oteldemo.AdService/GetAds", cpu_ms=1.6, calls=(_flag(), _flag()),
                             java_methods=AD_JAVA_METHODS),),
              logs=("Ad service starting.", "Ad service started, listening on 8080")),
        _spec("cart", port_env="CART_PORT", default_port=8080, memory=70.0, startup_s=2.0, style="json",
              caller="cart.cartstore.ValkeyCartStore",
              deps=(Dependency(name="valkey", kind="redis", address=Setting(env="VALKEY_ADDR"),
                               policy=RetryPolicy(timeout=Setting(default="5s"), retries=Setting(default="0"))),
                    _flagd()),
              ops=(Operation(name="oteldemo.CartService/GetCart", cpu_ms=0.8, calls=(
                       Call(dependency="valkey", operation="HGET"), _flag())),
                   Operation(name="oteldemo.CartService/AddItem", cpu_ms=0.9, calls=(
                       Call(dependency="valkey", operation="HGET"), Call(dependency="valkey", operation="HSET"),
                       Call(dependency="valkey", operation="EXPIRE"))),
                   Operation(name="oteldemo.CartService/EmptyCart", cpu_ms=0.6, calls=(
                       Call(dependency="valkey", operation="HSET"), Call(dependency="valkey", operation="EXPIRE"),
                       _flag()))),
              logs=("info: Microsoft.Hosting.Lifetime[14]", "      Now listening on: http://[::]:8080",
                    "info: Microsoft.Hosting.Lifetime[0]", "      Application started.")),
        _spec("currency", port_env="CURRENCY_PORT", default_port=8080, memory=6.0,
              ops=(Operation(name="oteldemo.CurrencyService/Convert", cpu_ms=0.08),
                   Operation(name="oteldemo.CurrencyService/GetSupportedCurrencies", cpu_ms=0.1)),
              logs=("Currency Server listening on port: 0.0.0.0:{port}",)),  # server.cpp: ip + ":" + port
        _spec("email", port_env="EMAIL_PORT", default_port=8080, protocol="http", memory=60.0, startup_s=2.0,
              deps=(_flagd(),),
              ops=(Operation(name="/send_order_confirmation", method="POST", cpu_ms=4.0, calls=(_flag(),)),),
              logs=("== Sinatra (v4.1.1) has taken the stage on 8080 for production with backup from Puma",
                    "Puma starting in single mode...", "* Listening on http://0.0.0.0:8080")),
        _spec("payment", port_env="PAYMENT_PORT", default_port=8080, memory=60.0, style="json", caller="payment",
              deps=(_flagd(),),
              ops=(Operation(name="oteldemo.PaymentService/Charge", cpu_ms=1.0, calls=(_flag(), _flag())),),
              logs=("payment gRPC server started on 0.0.0.0:{port}",)),  # bindAsync's callback
        _spec("product-catalog", port_env="PRODUCT_CATALOG_PORT", default_port=8080, memory=9.0, style="json",
              caller="main.go", deps=(_postgres(), _flagd()), ops=catalog_ops,
              logs=("Database connection established", "Product Catalog gRPC server started on port: {port}")),
        _spec("quote", port_env="QUOTE_PORT", default_port=8080, protocol="http", memory=20.0,
              ops=(Operation(name="/getquote", method="POST", cpu_ms=2.5),),
              logs=("[INFO] Starting server on 0.0.0.0:8080",)),
        _spec("recommendation", port_env="RECOMMENDATION_PORT", default_port=8080, memory=60.0, startup_s=2.0,
              deps=(_grpc("product-catalog", "PRODUCT_CATALOG_ADDR"), _flagd()),
              ops=(Operation(name="oteldemo.RecommendationService/ListRecommendations", cpu_ms=3.0, calls=(
                  _flag(), Call(dependency="product-catalog",
                                operation="oteldemo.ProductCatalogService/ListProducts"))),),
              logs=("Recommendation service started, listening on port {port}",)),
        _silent_on_errors(_spec("shipping", port_env="SHIPPING_PORT", default_port=8080, protocol="http", memory=6.0,
              # request_quote: awc's `client.post(QUOTE_ADDR + "/getquote")`; a failure answers
              # 500 "Failed to get quote: Failed to call quote service: <awc error>" and logs nothing
              deps=(_http("quote", "QUOTE_ADDR", timeout="5s").model_copy(update={"client": "awc"}),),
              ops=(Operation(name="/get-quote", method="POST", cpu_ms=0.2, calls=(
                       Call(dependency="quote", operation="POST /getquote"),)),
                   Operation(name="/ship-order", method="POST", cpu_ms=0.15)),
              # main.rs's tracing events (OTLP only): after the providers, before HttpServer::bind
              logs=("Successfully configured OTel", "Shipping service is running"))),
        _spec("product-reviews", port_env="PRODUCT_REVIEWS_PORT", default_port=3551, memory=70.0, startup_s=2.0,
              deps=(_postgres(), _grpc("product-catalog", "PRODUCT_CATALOG_ADDR"),
                    _http("llm", "LLM_HOST", port_env="LLM_PORT", timeout="30s"), _flagd()),
              ops=(Operation(name="oteldemo.ProductReviewService/GetProductReviews", cpu_ms=2.0, calls=(
                       Call(dependency="postgres", operation="select", collection="reviews.productreviews"),)),
                   Operation(name="oteldemo.ProductReviewService/GetAverageProductReviewScore", cpu_ms=1.5, calls=(
                       Call(dependency="postgres", operation="select", collection="reviews.productreviews"),)),
                   Operation(name="oteldemo.ProductReviewService/AskProductAIAssistant", cpu_ms=4.0, calls=(
                       Call(dependency="postgres", operation="select", collection="reviews.productreviews"),
                       Call(dependency="product-catalog", operation="oteldemo.ProductCatalogService/GetProduct"),
                       # llmRateLimitError's 429s and their retries are a delay and a log line
                       # (flag_paths.py), not calls of their own
                       Call(dependency="llm", operation="POST /v1/chat/completions"), _flag()))),
              logs=("Product reviews service started, listening on port {port}",)),
        _spec("llm", port_env=None, default_port=8000, protocol="http", memory=60.0, deps=(_flagd(),),
              ops=(Operation(name="/v1/chat/completions", method="POST", cpu_ms=6.0),),
              # app.py's print, then Flask's development server (`app.run(..., debug=True)`)
              logs=("OpenAI API server starting on http://localhost:8000", " * Serving Flask app 'app'",
                    " * Debug mode: on", "WARNING: This is a development server. Do not use it in a production "
                    "deployment. Use a production WSGI server instead.", " * Running on all addresses (0.0.0.0)",
                    " * Running on http://127.0.0.1:8000", "Press CTRL+C to quit", " * Restarting with stat",
                    " * Debugger is active!")),
        _spec("image-provider", port_env="IMAGE_PROVIDER_PORT", default_port=8081, protocol="http", memory=8.0,
              ops=(Operation(name="/images/{image}", cpu_ms=0.1, response_bytes=150_000),
                   Operation(name="/images/products/{picture}", cpu_ms=0.1, response_bytes=150_000),
                   Operation(name="/status", cpu_ms=0.05))),
        _spec("flagd", port_env=None, default_port=8013, memory=30.0, style="json", caller="flagd",
              ops=(Operation(name=FLAG_RESOLVE, cpu_ms=0.05),
                   Operation(name="flagd.evaluation.v1.Service/ResolveAll", cpu_ms=0.2)),
              logs=('{"level":"info","msg":"flag sync started","component":"sync"}',
                    '{"level":"info","msg":"Flag IResolver listening at [::]:8013","component":"service"}')),
    ]


def _silent_on_errors(spec: ProgramSpec) -> ProgramSpec:
    """A service whose handlers answer an error without logging it (shipping's get_quote returns
    500 "Failed to get quote: ..." and writes no line): the error shows in its spans only."""
    return spec.model_copy(update={"log": spec.log.model_copy(update={"error_burst": 0})})


def _with_flags(spec: ProgramSpec) -> ProgramSpec:
    """The service's flag checks (flag_paths.py): the flags its SDK evaluates, its branches."""
    name = spec.trace_name
    ops = tuple(op.model_copy(update={"paths": OPERATION_PATHS[(name, op.key)]})
                if (name, op.key) in OPERATION_PATHS else op for op in spec.operations)
    return spec.model_copy(update={"operations": ops, "flags": FLAG_CLIENTS.get(name),
                                   "paths": PROCESS_PATHS.get(name, ()),
                                   "not_serving_when": HEALTH_FAILS_WHEN.get(name, "")})


def astronomy_programs() -> list[ProgramSpec]:
    checkout = _checkout().model_copy(update={"settings": flag_setting()})
    specs = [_with_flags(s) for s in (_frontend_proxy(), _frontend(), checkout, *_simple(), accounting(PREFIX),
                                      fraud_detection(PREFIX, _flagd(), _flag()))]
    flagd = next(s for s in specs if s.service_name == "flagd")
    specs[specs.index(flagd)] = flagd_server(flagd.model_copy(update={"port": Setting(flag="--port", default="8013")}))
    return specs


__all__ = ["FLAG_RESOLVE", "PREFIX", "astronomy_programs"]
