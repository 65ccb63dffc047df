"""DeathStarBench's mixed workload for Hotel Reservation: the wrk2 Lua script (`mixed-workload_type_1.lua`).

The generator itself is the generic open-loop one (`sregym.apps.loadgen.wrk2`); this module only
holds the app's script, with the workload's ratios filled in by request class name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sregym.apps.loadgen import wrk2

if TYPE_CHECKING:
    from sregym.apps.loadgen.model import OpenLoop

SCRIPT = "mixed-workload_type_1.lua"

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


def lua_script(workload: OpenLoop) -> str:
    """The mixed-workload script with the workload's ratios (by request class name)."""
    weights = {m.name: m.weight for m in workload.mix}
    text = _LUA
    for name in ("search", "recommend", "user", "reserve"):
        text = text.replace("{" + name + "}", f"{weights.get(name, 0.0):g}")
    return text


def wrk_args(workload: OpenLoop) -> list[str]:
    return wrk2.wrk_args(workload)


__all__ = ["SCRIPT", "lua_script", "wrk_args"]
