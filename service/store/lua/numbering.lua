-- Prelude of the scripts that append events (commit.lua, act.lua, append.lua): each
-- viewer's event ids (`service.store.numbering`). `ids_open` reads the counts after the
-- game's last event (meta `event_ids`: public, seat 0, seat 1, ...; all 0 before the
-- first event; nil for a game stored before the counts, which goes on without them),
-- `ids_add` counts one event (its `visible_to`: "all" or a list of seats) and answers
-- the counts to store with it (field `v`, nil without counts), `ids_close` keeps them.
local function ids_open(meta)
  local t = {}
  local raw = redis.call('HGET', meta, 'event_ids')
  if raw then
    for x in string.gmatch(raw, '[^,]+') do t[#t + 1] = tonumber(x) end
    return t
  end
  if tonumber(redis.call('HGET', meta, 'event_seq') or '0') > 0 then return nil end
  for i = 1, tonumber(redis.call('HGET', meta, 'seats') or '0') + 1 do t[i] = 0 end
  return t
end
local function ids_add(t, json)
  if not t then return nil end
  local vis = cjson.decode(json)['visible_to']
  if vis == 'all' then
    for i = 1, #t do t[i] = t[i] + 1 end
  elseif type(vis) == 'table' then
    local seen = {}
    for _, s in ipairs(vis) do
      local i = tonumber(s)
      if i and i >= 0 and not seen[i] then
        seen[i] = true
        if t[i + 2] then t[i + 2] = t[i + 2] + 1 end
      end
    end
  end
  return table.concat(t, ',')
end
local function ids_close(meta, t)
  if t then redis.call('HSET', meta, 'event_ids', table.concat(t, ',')) end
end
