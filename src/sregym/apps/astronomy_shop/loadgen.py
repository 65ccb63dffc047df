"""The demo's Locust user flows (`src/load-generator/locustfile.py` of 2.2.0) as a closed loop.

`WebsiteUser` waits `between(1, 10)` seconds (mean 5.5) and picks tasks by the demo's weights:
index 1, browse_product 10, get_recommendations 3, get_product_reviews 2,
ask_product_ai_assistant 1, get_ads 3, view_cart 3, add_to_cart 2, checkout 1, checkout_multi 1,
flood_home 5. flood_home asks flagd (OFREP, `get_integer_value("loadGeneratorFloodHomepage", 0)`)
and sends that many `GET /` (the flag's `on` is 100); while it is 0 the pick sends nothing and
the user just thinks again, as in the demo. The chart starts 10 users at a
spawn rate of 1/s against `frontend-proxy:8080`. The chart also sets LOCUST_BROWSER_TRAFFIC_ENABLED=true, so
the file's `WebsiteBrowserUser` (Playwright) is live and Locust gives it half of the 10 users.
Product ids and categories are fixed picks from the demo's lists (the generator's paths are literal).

These flows are the chart's own `load-generator` Deployment's: `locustfile()` is the file its image
carries (`/usr/src/app/locustfile.py`, `WebsiteUser` with `between(1, 10)`), so the app has one
source of load, visible in its namespace as in the real demo.
"""

from __future__ import annotations

import json

from sregym.apps.loadgen.model import ClosedLoop, Request, Task

LOCUSTFILE_PATH = "/usr/src/app/locustfile.py"
USERS = 10
SPAWN_RATE = 1.0
THINK_S = 5.5  # between(1, 10)
PRODUCT = "OLJCESPC7Z"
FLOOD_FLAG = "loadGeneratorFloodHomepage"
FLOOD_WEIGHT = 5


def _add_to_cart() -> tuple[Request, ...]:
    return (Request("GET", f"/api/products/{PRODUCT}", "/api/products/{productId}"),
            Request("POST", "/api/cart", "/api/cart"))


def workload(target: str) -> ClosedLoop:
    checkout = Request("POST", "/api/checkout", "/api/checkout")
    tasks = (
        Task("index", 1, (Request("GET", "/"),)),
        Task("browse_product", 10, (Request("GET", f"/api/products/{PRODUCT}"),)),
        Task("get_recommendations", 3, (Request("GET", f"/api/recommendations?productIds={PRODUCT}"),)),
        Task("get_product_reviews", 2, (Request("GET", f"/api/product-reviews/{PRODUCT}"),)),
        Task("ask_product_ai_assistant", 1, (Request("POST", f"/api/product-ask-ai-assistant/{PRODUCT}"),)),
        Task("get_ads", 3, (Request("GET", "/api/data?contextKeys=telescopes"),)),
        Task("view_cart", 3, (Request("GET", "/api/cart"),)),
        Task("add_to_cart", 2, _add_to_cart()),
        Task("checkout", 1, (*_add_to_cart(), checkout)),
        Task("checkout_multi", 1, (*_add_to_cart(), *_add_to_cart(), *_add_to_cart(), checkout)),
    )
    return ClosedLoop(target=target, users=USERS, spawn_rate=SPAWN_RATE, think_time_s=THINK_S, tasks=tasks)


def locustfile(load: ClosedLoop) -> str:
    """The load generator's locustfile: the demo's user class and task names, literal paths."""
    lines = ["#!/usr/bin/python", "", "# Copyright The OpenTelemetry Authors", "# SPDX-License-Identifier: Apache-2.0",
             "", "import os", "", "from locust import HttpUser, between, task",
             "from locust_plugins.users.playwright import PlaywrightUser, pw, PageWithRetry, event",
             "from openfeature import api", "from openfeature.contrib.provider.ofrep import OFREPProvider", "",
             "base_url = f\"http://{os.environ.get('FLAGD_HOST', 'localhost')}:"
             "{os.environ.get('FLAGD_OFREP_PORT', 8016)}\"",
             "api.set_provider(OFREPProvider(base_url=base_url))", "", "",
             "def get_flagd_value(FlagName):", "    client = api.get_client()",
             "    return client.get_integer_value(FlagName, 0)", "", "", "class WebsiteUser(HttpUser):",
             "    wait_time = between(1, 10)"]
    for t in load.tasks:
        lines += ["", f"    @task({t.weight})", f"    def {t.name}(self):"]
        lines += [f"        self.client.{r.method.lower()}({json.dumps(r.path)})" for r in t.requests]
    lines += ["", f"    @task({FLOOD_WEIGHT})", "    def flood_home(self):",
              f"        flood_count = get_flagd_value({json.dumps(FLOOD_FLAG)})",
              "        for _ in range(0, flood_count):", '            self.client.get("/")']
    return "\n".join(lines) + "\n" + BROWSER_USER


# The demo's Playwright user, defined only when LOCUST_BROWSER_TRAFFIC_ENABLED is true/yes/on
# (the chart sets "true"); the twin replays its page steps (twin/dataplane/browser.py, site.py).
BROWSER_USER = '''

browser_traffic_enabled = os.environ.get("LOCUST_BROWSER_TRAFFIC_ENABLED", "").lower() in ("true", "yes", "on")

if browser_traffic_enabled:
    class WebsiteBrowserUser(PlaywrightUser):
        headless = True  # to use a headless browser, without a GUI

        @task
        @pw
        async def open_cart_page_and_change_currency(self, page: PageWithRetry):
            try:
                page.on("console", lambda msg: print(msg.text))
                await page.goto("/cart", wait_until="domcontentloaded")
                await page.select_option('[name="currency_code"]', 'CHF')
                await page.wait_for_timeout(2000)  # giving the browser time to export the traces
            except Exception as e:
                print(f"Error in change currency task: {str(e)}")

        @task
        @pw
        async def add_product_to_cart(self, page: PageWithRetry):
            try:
                page.on("console", lambda msg: print(msg.text))
                await page.goto("/", wait_until="domcontentloaded")
                await page.click('p:has-text("Roof Binoculars")')
                await page.wait_for_load_state("domcontentloaded")
                await page.click('button:has-text("Add To Cart")')
                await page.wait_for_load_state("domcontentloaded")
                await page.wait_for_timeout(2000)  # giving the browser time to export the traces
            except Exception as e:
                print(f"Error in add to cart task: {str(e)}")
'''


__all__ = ["FLOOD_FLAG", "LOCUSTFILE_PATH", "SPAWN_RATE", "USERS", "locustfile", "workload"]
