"""The wrk2 load generator Deployment, in the hidden `sregym-system` namespace.

Like SREGym's wrk2 job (image `deathstarbench/wrk2-client`, script `mixed-workload_type_1.lua`)
but long-running: a shell loop restarts `wrk` every hour, as people run wrk2 as a Deployment. The
`wrk` binary is the data plane's wrk2 program (`twin/dataplane/loadgen.py`): it reads its rate
(`-R`), distribution (`-D`), timeout and target URL from its args and the request mix from the
Lua script mounted from the `sregym-loadgen-workload` ConfigMap, and sends traffic from its own pod
while it runs. Scaling the Deployment to zero or deleting it stops the traffic.

Every name of the generator is `sregym-loadgen` (Deployment, container, labels), one of the jobs
the query APIs hide (`sregym.twin.telemetry.visibility.HIDDEN_JOBS`), on top of the hidden namespace.
"""

from __future__ import annotations

import yaml

from sregym.apps.catalog import Workload
from sregym.twin.dataplane.loadgen import wrk_command
from sregym.twin.node.images import ImageSpec, register_image

LOADGEN_NAMESPACE = "sregym-system"
LOADGEN_NAME = "sregym-loadgen"
IMAGE = "deathstarbench/wrk2-client:latest"
SCRIPT = "mixed-workload_type_1.lua"
SCRIPT_DIR = "/scripts"
RUN_DURATION = "1h"  # each wrk run; the loop starts the next one at once

register_image(ImageSpec("docker.io/deathstarbench/wrk2-client", ("latest",), size_mb=62.3,
                         description="wrk2 HTTP load generator (DeathStarBench fork)",
                         entrypoint=("/usr/local/bin/wrk",), shell="dash", commands={"wrk": wrk_command}))

# The mixed workload: the `request` function draws a coin against the ratios in the order they are
# declared; each request function builds the method and the path from random users, dates and
# coordinates around San Francisco (the data set the databases are initialised with).
_LUA = """\
local socket = require("socket")
math.randomseed(socket.gettime() * 1000)
math.random(); math.random(); math.random()

local url = "http://localhost:5000"

local function get_user()
  local id = math.random(0, 500)
  local user_name = "Cornell_" .. tostring(id)
  local pass_word = ""
  for i = 0, 9, 1 do
    pass_word = pass_word .. tostring(id)
  end
  return user_name, pass_word
end

local function date_pair()
  local in_date = math.random(9, 23)
  local out_date = math.random(in_date + 1, 24)
  local function fmt(day)
    if day <= 9 then return "2015-04-0" .. tostring(day) end
    return "2015-04-" .. tostring(day)
  end
  return fmt(in_date), fmt(out_date)
end

local function coordinates()
  local lat = 38.0235 + (math.random(0, 481) - 240.5) / 1000.0
  local lon = -122.095 + (math.random(0, 325) - 157.0) / 1000.0
  return lat, lon
end

local function search_hotel()
  local in_date_str, out_date_str = date_pair()
  local lat, lon = coordinates()
  local method = "GET"
  local path = url .. "/hotels?inDate=" .. in_date_str .. "&outDate=" .. out_date_str ..
    "&lat=" .. tostring(lat) .. "&lon=" .. tostring(lon)
  local headers = {}
  return wrk.format(method, path, headers, nil)
end

local function recommend()
  local coin = math.random()
  local req_param = "price"
  if coin < 0.33 then
    req_param = "dis"
  elseif coin < 0.66 then
    req_param = "rate"
  end
  local lat, lon = coordinates()
  local method = "GET"
  local path = url .. "/recommendations?require=" .. req_param ..
    "&lat=" .. tostring(lat) .. "&lon=" .. tostring(lon)
  local headers = {}
  return wrk.format(method, path, headers, nil)
end

local function reserve()
  local in_date_str, out_date_str = date_pair()
  local lat, lon = coordinates()
  local hotel_id = tostring(math.random(1, 80))
  local user_id, password = get_user()
  local method = "POST"
  local path = url .. "/reservation?inDate=" .. in_date_str .. "&outDate=" .. out_date_str ..
    "&lat=" .. tostring(lat) .. "&lon=" .. tostring(lon) .. "&hotelId=" .. hotel_id ..
    "&customerName=" .. user_id .. "&username=" .. user_id .. "&password=" .. password .. "&number=1"
  local headers = {}
  return wrk.format(method, path, headers, nil)
end

local function user_login()
  local user_name, password = get_user()
  local method = "POST"
  local path = url .. "/user?username=" .. user_name .. "&password=" .. password
  local headers = {}
  return wrk.format(method, path, headers, nil)
end

request = function()
  cur_time = math.floor(socket.gettime())
  local search_ratio    = {search}
  local recommend_ratio = {recommend}
  local user_ratio      = {user}
  local reserve_ratio   = {reserve}

  local coin = math.random()
  if coin < search_ratio then
    return search_hotel(url)
  elseif coin < search_ratio + recommend_ratio then
    return recommend(url)
  elseif coin < search_ratio + recommend_ratio + user_ratio then
    return user_login(url)
  else
    return reserve(url)
  end
end
"""


def lua_script(workload: Workload) -> str:
    """The mixed-workload script with the workload's ratios (by request class name)."""
    weights = {m.name: m.weight for m in workload.mix}
    text = _LUA
    for name in ("search", "recommend", "user", "reserve"):
        text = text.replace("{" + name + "}", f"{weights.get(name, 0.0):g}")
    return text


def wrk_args(workload: Workload, duration: str = RUN_DURATION) -> list[str]:
    return ["-D", workload.distribution, f"-t{workload.threads}", f"-c{workload.connections}",
            f"-d{duration}", "-L", "-s", f"{SCRIPT_DIR}/{SCRIPT}", workload.target, f"-R{workload.rate:g}"]


def manifests(app_name: str, workload: Workload, *, name: str = LOADGEN_NAME) -> str:
    """Namespace, script ConfigMap and wrk2 Deployment for `app_name`'s workload."""
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/instance": app_name}
    annotations = {"sregym.io/app": app_name}
    loop = f"while true; do wrk {' '.join(wrk_args(workload))}; done"
    docs = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": LOADGEN_NAMESPACE}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": f"{name}-workload", "namespace": LOADGEN_NAMESPACE, "labels": labels},
         "data": {SCRIPT: lua_script(workload)}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": name, "namespace": LOADGEN_NAMESPACE, "labels": labels, "annotations": annotations},
         "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels, "annotations": annotations},
                               "spec": {"containers": [{
                                   "name": name, "image": IMAGE, "command": ["/bin/sh", "-c"], "args": [loop],
                                   "volumeMounts": [{"name": "workload", "mountPath": SCRIPT_DIR}],
                                   "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                                 "limits": {"memory": "256Mi"}}}],
                                   "volumes": [{"name": "workload", "configMap": {"name": f"{name}-workload"}}]}}}},
    ]
    return "\n---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)
