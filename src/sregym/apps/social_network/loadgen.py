"""DeathStarBench's mixed workload for Social Network: the wrk2 Lua script
(`wrk2/scripts/social-network/mixed-workload.lua`), our own text with the same behaviour.

Read home timeline 60 %, read user timeline 30 %, compose post 10 % over users `username_0` ..
`username_961` (the social graph the databases are seeded with); a composed post carries a
256-character text with up to five mentions, up to five URLs and up to four media ids. The
generator is the generic open-loop one (`sregym.apps.loadgen.wrk2`); the ratios are filled in by
request class name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sregym.apps.loadgen.model import OpenLoop

SCRIPT = "mixed-workload.lua"

_LUA = """\
local socket = require("socket")
math.randomseed(socket.gettime() * 1000)
math.random(); math.random(); math.random()

local url = "http://localhost:8080"
local max_user_index = tonumber(os.getenv("max_user_index")) or 962
local letters = "qwertyuiopasdfghjklzxcvbnmQWERTYUIOPASDFGHJKLZXCVBNM1234567890"

local function random_string(length)
  local out = {}
  for i = 1, length do
    local k = math.random(1, #letters)
    out[i] = letters:sub(k, k)
  end
  return table.concat(out)
end

local function random_digits(length)
  local out = {}
  for i = 1, length do
    out[i] = tostring(math.random(0, 9))
  end
  return table.concat(out)
end

local function timeline_args()
  local user_id = tostring(math.random(0, max_user_index - 1))
  local start = math.random(0, 100)
  return "user_id=" .. user_id .. "&start=" .. tostring(start) .. "&stop=" .. tostring(start + 10)
end

local function read_home_timeline()
  local method = "GET"
  local path = url .. "/wrk2-api/home-timeline/read?" .. timeline_args()
  local headers = {}
  headers["Content-Type"] = "application/x-www-form-urlencoded"
  return wrk.format(method, path, headers, nil)
end

local function read_user_timeline()
  local method = "GET"
  local path = url .. "/wrk2-api/user-timeline/read?" .. timeline_args()
  local headers = {}
  headers["Content-Type"] = "application/x-www-form-urlencoded"
  return wrk.format(method, path, headers, nil)
end

local function compose_post()
  local author = math.random(0, max_user_index - 1)
  local text = random_string(256)
  for _ = 0, math.random(0, 5) do
    local mentioned = author
    while mentioned == author do
      mentioned = math.random(0, max_user_index - 1)
    end
    text = text .. " @username_" .. tostring(mentioned)
  end
  for _ = 0, math.random(0, 5) do
    text = text .. " http://" .. random_string(64)
  end
  local ids, types = {}, {}
  for i = 0, math.random(0, 4) do
    ids[i + 1] = "\\"" .. random_digits(18) .. "\\""
    types[i + 1] = "\\"png\\""
  end
  local method = "POST"
  local path = url .. "/wrk2-api/post/compose"
  local headers = {}
  headers["Content-Type"] = "application/x-www-form-urlencoded"
  local body = "username=username_" .. tostring(author) .. "&user_id=" .. tostring(author) ..
    "&text=" .. text .. "&media_ids=[" .. table.concat(ids, ",") .. "]&media_types=[" ..
    table.concat(types, ",") .. "]&post_type=0"
  return wrk.format(method, path, headers, body)
end

request = function()
  local read_home_timeline_ratio = {read-home-timeline}
  local read_user_timeline_ratio = {read-user-timeline}
  local compose_post_ratio       = {compose-post}

  local coin = math.random()
  if coin < read_home_timeline_ratio then
    return read_home_timeline()
  elseif coin < read_home_timeline_ratio + read_user_timeline_ratio then
    return read_user_timeline()
  else
    return compose_post()
  end
end
"""


def lua_script(workload: OpenLoop) -> str:
    """The mixed-workload script with the workload's ratios (by request class name)."""
    weights = {m.name: m.weight for m in workload.mix}
    text = _LUA
    for name in ("read-home-timeline", "read-user-timeline", "compose-post"):
        text = text.replace("{" + name + "}", f"{weights.get(name, 0.0):g}")
    return text


__all__ = ["SCRIPT", "lua_script"]
