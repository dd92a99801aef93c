-- Store one seat's order for the open step; flip the step to `resolving` when every
-- requested seat has answered. Atomic: of many concurrent submissions exactly one
-- returns 'trigger'. A paused step (`paused_at`, pause.lua) stores the last order and
-- answers 'stored': it flips when the host resumes (resume.lua).
-- KEYS: phase, orders of the step, the step's one-time ids (SET; the commit drops it)[, meta]
-- ARGV: phase id, seat, order record (JSON: `dumps` of service/core/records.py
--       `order_record`, the very text order.lua stores for the fast path), one-time id TTL (0: none),
--       the one-time id[, '1': a flip answers what resolving the step reads but the state,
--       as resolve_read.lua does (KEYS[4] given): then 5 meta, 6 the step's hash (after
--       the flip, with its state version `v`), 7 its orders (flat lists)]
local id = redis.call('HGET', KEYS[1], 'id')
local status = redis.call('HGET', KEYS[1], 'status')
if id ~= ARGV[1] then return {'stale', id or '', status or ''} end
if status ~= 'collecting' then return {'locked', id, status} end
local expected = cjson.decode(redis.call('HGET', KEYS[1], 'expected'))
local wanted = false
for _, s in ipairs(expected) do
  if tostring(s) == ARGV[2] then wanted = true end
end
if not wanted then return {'not_requested', id, status} end
if tonumber(ARGV[4]) > 0 then
  if redis.call('SADD', KEYS[3], ARGV[5]) == 0 then
    return {'replayed', id, status}
  end
  redis.call('EXPIRE', KEYS[3], ARGV[4])
end
local replaced = 0
if redis.call('HSET', KEYS[2], ARGV[2], ARGV[3]) == 0 then replaced = 1 end
local paused = redis.call('HGET', KEYS[1], 'paused_at')
if redis.call('HLEN', KEYS[2]) >= #expected and (not paused or paused == '') then
  local t = redis.call('TIME')
  redis.call('HSET', KEYS[1], 'status', 'resolving',
    'flipped_at', string.format('%d.%06d', tonumber(t[1]), tonumber(t[2])))
  redis.call('SPUBLISH', (string.gsub(KEYS[1], ':phase$', ':live')), 'resolving ' .. id)
  if ARGV[6] == '1' then
    return {'trigger', id, 'resolving', replaced, redis.call('HGETALL', KEYS[4]), redis.call('HGETALL', KEYS[1]),
            redis.call('HGETALL', KEYS[2])}
  end
  return {'trigger', id, 'resolving', replaced}
end
return {'stored', id, 'collecting', replaced}
